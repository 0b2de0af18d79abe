"""mx.nd's operators generated from the registry: every operator is there
with MXNet's signature and the registry's docs, and a few compute what
numpy does."""
import ctypes
import inspect

import numpy as np
import pytest

import mx
from conftest import assert_close


def registry_names():
    size = ctypes.c_uint()
    names = ctypes.POINTER(ctypes.c_char_p)()
    mx.base._LIB.MXListAllOpNames(ctypes.byref(size), ctypes.byref(names))
    return [names[i].decode() for i in range(size.value)]


def test_every_registered_operator_is_generated():
    names = registry_names()
    assert len(names) >= 97
    for name in names:
        assert callable(getattr(mx.nd, name)), name
        assert callable(getattr(mx.sym, name)), name
    assert mx.nd._internal._plus_scalar is mx.nd._plus_scalar
    assert mx.nd.contrib.div_sqrt_dim is mx.nd._contrib_div_sqrt_dim


def test_signatures_are_mxnets():
    sig = inspect.signature(mx.nd.FullyConnected)
    assert list(sig.parameters) == ["data", "weight", "bias", "num_hidden", "no_bias", "flatten",
                                    "out", "name", "kwargs"]
    sig = inspect.signature(mx.nd.BatchNorm)
    assert list(sig.parameters)[:5] == ["data", "gamma", "beta", "moving_mean", "moving_var"]
    sig = inspect.signature(mx.nd.Concat)
    assert sig.parameters["data"].kind == inspect.Parameter.VAR_POSITIONAL
    assert "dim" in sig.parameters and "num_args" not in sig.parameters
    assert "name" in inspect.signature(mx.sym.Convolution).parameters


def test_docstrings_come_from_the_registry():
    doc = mx.nd.FullyConnected.__doc__
    assert "num_hidden : int, required" in doc
    assert "no_bias : boolean, optional, default=False" in doc
    assert "Parameters" in mx.nd.Pooling.__doc__ and "pool_type" in mx.nd.Pooling.__doc__
    assert mx.nd.Pooling.__name__ == "Pooling"


def test_fully_connected_and_activation():
    rng = np.random.RandomState(0)
    x, w, b = rng.randn(4, 5), rng.randn(3, 5), rng.randn(3)
    y = mx.nd.FullyConnected(mx.nd.array(x), mx.nd.array(w), mx.nd.array(b), num_hidden=3)
    assert_close(y.asnumpy(), x @ w.T + b, rtol=1e-5, atol=1e-5)
    y = mx.nd.FullyConnected(data=mx.nd.array(x), weight=mx.nd.array(w), no_bias=True,
                             num_hidden=3)
    assert_close(y.asnumpy(), x @ w.T, rtol=1e-5, atol=1e-5)
    r = mx.nd.Activation(mx.nd.array(x), act_type="relu")
    assert_close(r.asnumpy(), np.maximum(x, 0))


def test_softmax_sum_transpose_dot():
    rng = np.random.RandomState(1)
    x = rng.randn(3, 4).astype(np.float32)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    assert_close(mx.nd.softmax(mx.nd.array(x)).asnumpy(), e / e.sum(axis=1, keepdims=True))
    assert_close(mx.nd.sum(mx.nd.array(x), axis=0).asnumpy(), x.sum(axis=0), rtol=1e-5)
    # positional parameters follow the inputs, as in MXNet's generated functions
    assert_close(mx.nd.sum(mx.nd.array(x), 1).asnumpy(), x.sum(axis=1), rtol=1e-5)
    assert_close(mx.nd.sum(mx.nd.array(x), axis=(0, 1), keepdims=True).asnumpy(),
                 x.sum(keepdims=True), rtol=1e-5)
    assert_close(mx.nd.transpose(mx.nd.array(x)).asnumpy(), x.T)
    assert_close(mx.nd.dot(mx.nd.array(x), mx.nd.array(x), transpose_b=True).asnumpy(),
                 x @ x.T, rtol=1e-5, atol=1e-5)


def test_variadic_and_multi_output_operators():
    a, b = np.ones((2, 3), np.float32), np.zeros((2, 3), np.float32)
    c = mx.nd.Concat(mx.nd.array(a), mx.nd.array(b), dim=1)
    assert_close(c.asnumpy(), np.concatenate([a, b], axis=1))
    s = mx.nd.add_n(mx.nd.array(a), mx.nd.array(a), mx.nd.array(a))
    assert_close(s.asnumpy(), 3 * a)
    parts = mx.nd.SliceChannel(mx.nd.array(np.arange(12, dtype=np.float32).reshape(2, 6)),
                               num_outputs=3, axis=1)
    assert isinstance(parts, list) and len(parts) == 3
    assert_close(parts[2].asnumpy(), [[4, 5], [10, 11]])


def test_out_argument_writes_in_place():
    x = mx.nd.array([1.0, -2.0, 3.0])
    out = mx.nd.zeros((3,))
    assert mx.nd.relu(x, out=out) is out
    assert_close(out.asnumpy(), [1, 0, 3])
    mx.nd.relu(x, out=x)
    assert_close(x.asnumpy(), [1, 0, 3])


def test_parameters_as_python_values():
    x = mx.nd.array(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    p = mx.nd.Pooling(x, kernel=(2, 2), stride=[2, 2], pool_type="max")
    assert_close(p.asnumpy().ravel(), [5, 7, 13, 15])
    c = mx.nd.Cast(x, dtype=np.float64)
    assert c.dtype == np.float64
    d = mx.nd.Dropout(x, p=0.5, cudnn_off=True)  # bools as MXNet spells them
    assert d.shape == x.shape


def test_bad_calls():
    x = mx.nd.ones((2, 3))
    with pytest.raises(mx.MXNetError, match="did you mean 'num_hidden'"):
        mx.nd.FullyConnected(x, mx.nd.ones((4, 3)), mx.nd.ones(4), num_hiden=4)
    with pytest.raises(mx.MXNetError, match="num_hidden"):
        mx.nd.FullyConnected(x, mx.nd.ones((4, 3)), mx.nd.ones(4))
    with pytest.raises(TypeError, match="multiple values for input 'data'"):
        mx.nd.relu(x, data=x)
    with pytest.raises(TypeError, match="inputs must be NDArrays"):
        mx.nd.relu(np.ones(3))
    with pytest.raises(TypeError, match="not an input of relu"):
        mx.nd.relu(x, weight=x)
    with pytest.raises(TypeError, match="positional arguments"):
        mx.nd.relu(x, x)


def test_update_operators_follow_mxnets_formulas():
    rng = np.random.RandomState(2)
    w, g, m = rng.randn(5), rng.randn(5), rng.randn(5)
    lr, wd, rs, mo = 0.1, 0.01, 0.5, 0.9
    W = mx.nd.array(w)
    mx.nd.sgd_update(W, mx.nd.array(g), lr=lr, wd=wd, rescale_grad=rs, out=W)
    assert_close(W.asnumpy(), (1 - lr * wd) * w - lr * rs * g, rtol=1e-5)

    W, M = mx.nd.array(w), mx.nd.array(m)
    mx.nd.sgd_mom_update(W, mx.nd.array(g), M, lr=lr, momentum=mo, wd=wd, rescale_grad=rs,
                         clip_gradient=0.3, out=W)
    mom = mo * m - lr * wd * w - lr * np.clip(rs * g, -0.3, 0.3)
    assert_close(M.asnumpy(), mom, rtol=1e-5, atol=1e-6)
    assert_close(W.asnumpy(), w + mom, rtol=1e-5, atol=1e-6)

    W, mean, var = mx.nd.array(w), mx.nd.zeros(5), mx.nd.zeros(5)
    mx.nd.adam_update(W, mx.nd.array(g), mean, var, lr=lr, wd=wd, rescale_grad=rs, out=W)
    gg = rs * g + wd * w
    mm, vv = 0.1 * gg, 0.001 * gg * gg
    assert_close(mean.asnumpy(), mm, rtol=1e-5)
    assert_close(var.asnumpy(), vv, rtol=1e-5)
    assert_close(W.asnumpy(), w - lr * mm / (np.sqrt(vv) + 1e-8), rtol=1e-4)


def test_optimizers_train_a_quadratic():
    for opt in (mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                mx.optimizer.create("adam", learning_rate=0.1)):
        updater = mx.optimizer.get_updater(opt)
        w = mx.nd.array([3.0, -2.0])
        for _ in range(200):
            updater(0, 2 * w, w)  # gradient of |w|^2
        assert np.abs(w.asnumpy()).max() < 0.05, type(opt).__name__


def test_schedulers():
    s = mx.lr_scheduler.MultiFactorScheduler(step=[3, 5], factor=0.5, base_lr=1.0)
    assert [s(n) for n in range(1, 8)] == [1, 1, 1, 0.5, 0.5, 0.25, 0.25]
    f = mx.lr_scheduler.FactorScheduler(step=2, factor=0.1, base_lr=1.0)
    assert_close([f(n) for n in (1, 2, 3, 5)], [1, 1, 0.1, 0.01])
