"""mx.nd.save / mx.nd.load: MXNet's .params format, round trips and the
committed files MXNet 1.9.1 wrote (tests/fixtures/params, manifest.txt)."""
import os

import numpy as np
import pytest

import mx

FLAG_TO_NP = {0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8, 4: np.int32,
              5: np.int8, 6: np.int64}


def test_dict_round_trip_every_dtype(tmp_path):
    path = str(tmp_path / "x.params")
    data = {f"arg:{np.dtype(t).name}": mx.nd.array(np.arange(6).reshape(2, 3) % 100, dtype=t)
            for t in FLAG_TO_NP.values()}
    mx.nd.save(path, data)
    loaded = mx.nd.load(path)
    assert list(loaded) == list(data)
    for k, v in data.items():
        assert loaded[k].dtype == v.dtype
        np.testing.assert_array_equal(loaded[k].asnumpy(), v.asnumpy())


def test_list_and_single_array(tmp_path):
    path = str(tmp_path / "x.nd")
    mx.nd.save(path, [mx.nd.ones((2,)), mx.nd.zeros((1, 3))])
    a, b = mx.nd.load(path)
    assert a.shape == (2,) and b.shape == (1, 3)
    mx.nd.save(path, mx.nd.ones((4,)))
    (c,) = mx.nd.load(path)
    assert c.asnumpy().tolist() == [1, 1, 1, 1]
    mx.nd.save(path, [])
    assert mx.nd.load(path) == []


def test_save_errors(tmp_path):
    with pytest.raises(TypeError, match="every value must be an NDArray"):
        mx.nd.save(str(tmp_path / "x"), [np.ones(2)])
    with pytest.raises(TypeError, match="keys must be str"):
        mx.nd.save(str(tmp_path / "x"), {1: mx.nd.ones(2)})
    with pytest.raises(mx.MXNetError):
        mx.nd.save(str(tmp_path / "no" / "such" / "dir" / "x"), [mx.nd.ones(2)])


def test_load_errors(tmp_path):
    with pytest.raises(mx.MXNetError, match="missing.params"):
        mx.nd.load(str(tmp_path / "missing.params"))
    bad = tmp_path / "bad.params"
    bad.write_bytes(b"\x12\x01\x00\x00\x00\x00\x00\x00" + b"\x00" * 3)
    with pytest.raises(mx.MXNetError, match="bad.params"):
        mx.nd.load(str(bad))


def manifest(fixtures_dir):
    """(file, name, type flag, shape, values) per array of manifest.txt."""
    entries = []
    with open(os.path.join(fixtures_dir, "params", "manifest.txt")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            fields = line.split()
            if fields[2] in ("EMPTY", "NONE"):
                entries.append((fields[0], fields[1], fields[2], None, None))
                continue
            flag, ndim = int(fields[2]), int(fields[3])
            shape = tuple(int(d) for d in fields[4:4 + ndim])
            count = int(fields[4 + ndim])
            values = fields[5 + ndim:5 + ndim + count]
            entries.append((fields[0], fields[1], flag, shape, values))
    return entries


def test_files_mxnet_wrote(fixtures_dir):
    entries = manifest(fixtures_dir)
    files = sorted({e[0] for e in entries})
    assert "dtypes.params" in files and "checkpoint-0001.params" in files
    for fname in files:
        loaded = mx.nd.load(os.path.join(fixtures_dir, "params", fname))
        mine = [e for e in entries if e[0] == fname]
        if mine[0][2] == "EMPTY":
            assert loaded == [], fname
            continue
        arrays = list(loaded.values()) if isinstance(loaded, dict) else loaded
        if isinstance(loaded, dict):
            assert list(loaded) == [e[1] for e in mine], fname
        assert len(arrays) == len(mine), fname
        for (_, name, flag, shape, values), arr in zip(mine, arrays):
            if flag == "NONE":
                continue
            dtype = FLAG_TO_NP[flag]
            assert arr.dtype == dtype, (fname, name)
            got = arr.asnumpy()
            assert got.size == len(values), (fname, name)
            assert got.shape == shape or (shape == () and got.size == 1), (fname, name)
            if np.issubdtype(dtype, np.integer):
                expected = np.array([int(v) for v in values], dtype=dtype)
            else:
                expected = np.array([float(v) for v in values], dtype=np.float64).astype(dtype)
            np.testing.assert_array_equal(got.reshape(-1), expected, err_msg=f"{fname} {name}")


def test_checkpoint_written_again_is_the_same_bytes(fixtures_dir, tmp_path):
    src = os.path.join(fixtures_dir, "params", "checkpoint-0001.params")
    again = str(tmp_path / "again.params")
    mx.nd.save(again, mx.nd.load(src))
    with open(src, "rb") as a, open(again, "rb") as b:
        assert a.read() == b.read()
