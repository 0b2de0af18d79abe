"""Errors reach Python as mx.base.MXNetError with libmx's message; a
missing library is an ImportError that says what was tried."""
import os
import subprocess
import sys

import pytest

import mx


def test_mxnet_error_carries_libmx_message():
    assert mx.MXNetError is mx.base.MXNetError
    with pytest.raises(mx.base.MXNetError) as info:
        mx.nd.Convolution(mx.nd.ones((1, 1, 4, 4)), mx.nd.ones((2, 1, 3, 3)), mx.nd.ones(2),
                          kernel=(3, 3), num_filter=3)
    text = str(info.value)
    assert text.startswith("MXImperativeInvoke: Convolution") and "3" in text
    with pytest.raises(mx.MXNetError, match="unknown operator|no operator|closest|did you mean"):
        mx.base.check_call(mx.base._LIB.NNGetOpHandle(b"FullyConected",
                                                      mx.base.ctypes.byref(
                                                          mx.base.ctypes.c_void_p())))


def test_an_asynchronous_failure_surfaces_when_the_value_is_read():
    a = mx.nd.ones((2,), dtype="int32")
    b = mx.nd.exp(a)  # exp takes float32/float64: the failure happens on the engine
    with pytest.raises(mx.MXNetError, match="exp"):
        b.asnumpy()


def test_bad_element_type_and_device():
    with pytest.raises(TypeError, match="no element type"):
        mx.nd.zeros((2,), dtype="complex64")
    with pytest.raises(ValueError, match="unknown device type"):
        mx.Context("tpu", 0)


def test_import_error_names_what_was_tried(tmp_path):
    env = dict(os.environ, MX_LIBRARY_PATH=str(tmp_path / "nowhere" / "libmx.so"),
               LD_LIBRARY_PATH="")
    code = "import mx"
    # A copy of the package without libmx.so next to it, and no system libmx.
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=str(tmp_path))
    if proc.returncode == 0:
        pytest.skip("libmx.so is installed system-wide")
    assert "ImportError" in proc.stderr
    assert "MX_LIBRARY_PATH" in proc.stderr and "nowhere" in proc.stderr


def _loaded_library(env, cwd):
    code = "import mx; print(mx.base._LIB._name)"
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_library_lookup_order(tmp_path):
    lib = mx.base._LIB._name
    if os.path.sep not in lib:
        pytest.skip("libmx.so was found by the system's search, not a path")
    lib_dir = os.path.dirname(lib)
    # MX_LIBRARY_PATH may name the folder
    env = dict(os.environ, MX_LIBRARY_PATH=lib_dir)
    assert _loaded_library(env, str(tmp_path)).startswith(lib_dir)
    # without it, a library beside the package is taken
    import shutil
    pkg = tmp_path / "site" / "mx"
    shutil.copytree(os.path.dirname(mx.__file__), pkg)
    os.symlink(os.path.realpath(lib), pkg / "libmx.so.0")
    env = {k: v for k, v in os.environ.items() if k != "MX_LIBRARY_PATH"}
    env["PYTHONPATH"] = str(tmp_path / "site")
    assert _loaded_library(env, str(tmp_path)) == str(pkg / "libmx.so.0")
