"""NDArray: values in and out for every element type, shapes, devices,
arithmetic against numpy, indexing, views and copies."""
import numpy as np
import pytest

import mx
from conftest import assert_close

DTYPES = [np.float32, np.float64, np.float16, np.uint8, np.int32, np.int8, np.int64]


@pytest.mark.parametrize("dtype", DTYPES)
def test_round_trip_every_dtype(dtype):
    values = (np.arange(24).reshape(2, 3, 4) % 100).astype(dtype)
    a = mx.nd.array(values, dtype=dtype)
    assert a.dtype == dtype
    assert a.shape == (2, 3, 4)
    assert a.size == 24 and a.ndim == 3 and len(a) == 2
    out = a.asnumpy()
    assert out.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(out, values)


@pytest.mark.parametrize("dtype", DTYPES)
def test_zeros_ones_full_every_dtype(dtype):
    np.testing.assert_array_equal(mx.nd.zeros((2, 3), dtype=dtype).asnumpy(),
                                  np.zeros((2, 3), dtype))
    np.testing.assert_array_equal(mx.nd.ones(4, dtype=dtype).asnumpy(), np.ones(4, dtype))
    np.testing.assert_array_equal(mx.nd.full((3,), 7, dtype=dtype).asnumpy(),
                                  np.full(3, 7, dtype))
    assert mx.nd.empty((5, 1), dtype=dtype).shape == (5, 1)


@pytest.mark.parametrize("dtype", [np.float64, np.int32, np.uint8])
def test_astype(dtype):
    a = mx.nd.array([1.0, 2.0, 250.0])
    b = a.astype(dtype)
    assert b.dtype == dtype
    np.testing.assert_array_equal(b.asnumpy(), np.array([1, 2, 250], dtype))
    assert a.astype(np.float32, copy=False) is a


def test_array_defaults_to_float32_as_mxnet():
    assert mx.nd.array([1, 2, 3]).dtype == np.float32
    assert mx.nd.array(np.arange(3, dtype=np.int64)).dtype == np.float32
    i = mx.nd.array([1, 2], dtype="int32")
    assert mx.nd.array(i).dtype == np.int32


def test_context_and_default_context():
    a = mx.nd.zeros((2,))
    assert a.context == mx.cpu() and a.ctx == mx.cpu(0)
    assert str(mx.cpu(1)) == "cpu(1)" and mx.gpu(2).device_type == "gpu"
    assert mx.gpu(0) != mx.cpu(0)
    with mx.cpu(0) as ctx:
        assert mx.current_context() == ctx
    assert a.as_in_context(mx.cpu()) is a


def test_scalar_conversions_and_repr():
    a = mx.nd.array([2.5])
    assert a.asscalar() == 2.5 and float(a) == 2.5 and int(a) == 2 and bool(a)
    with pytest.raises(ValueError):
        bool(mx.nd.ones((2,)))
    assert "<NDArray 2x3 @cpu(0)>" in repr(mx.nd.zeros((2, 3)))


def test_wait_and_waitall():
    a = mx.nd.ones((100, 100))
    b = mx.nd.dot(a, a)
    b.wait_to_read()
    mx.nd.waitall()
    assert b.asnumpy()[0, 0] == 100


x_np = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)
y_np = np.array([[0.5, 2.0, -1.0], [3.0, -4.0, 2.0]], np.float32)
row_np = np.array([1.0, 2.0, 4.0], np.float32)


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_arithmetic_against_numpy(op):
    x, y, row = mx.nd.array(x_np), mx.nd.array(y_np), mx.nd.array(row_np)
    f = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
         "/": lambda a, b: a / b}[op]
    assert_close(f(x, y).asnumpy(), f(x_np, y_np))            # same shape
    assert_close(f(x, row).asnumpy(), f(x_np, row_np))        # broadcast
    assert_close(f(x, 2.5).asnumpy(), f(x_np, 2.5))           # array and scalar
    assert_close(f(2.5, x).asnumpy(), f(2.5, x_np))           # scalar and array
    assert_close(f(x, y_np).asnumpy(), f(x_np, y_np))         # array and numpy array
    assert_close(f(x_np, y).asnumpy(), f(x_np, y_np))         # numpy array and array


@pytest.mark.parametrize("op", ["+=", "-=", "*=", "/="])
def test_inplace_arithmetic(op):
    a = mx.nd.array(x_np)
    handle = a.handle.value
    expected = x_np.copy()
    for other, other_np in ((mx.nd.array(y_np), y_np), (3.0, 3.0), (mx.nd.array(row_np), row_np)):
        if op == "+=":
            a += other
            expected += other_np
        elif op == "-=":
            a -= other
            expected -= other_np
        elif op == "*=":
            a *= other
            expected *= other_np
        else:
            a /= other
            expected /= other_np
    assert a.handle.value == handle  # the same array, written in place
    assert_close(a.asnumpy(), expected)


def test_unary_and_power():
    x = mx.nd.array(x_np)
    assert_close((-x).asnumpy(), -x_np)
    assert_close(abs(x).asnumpy(), np.abs(x_np))
    assert_close((x ** 2).asnumpy(), x_np ** 2)
    assert_close((2 ** x).asnumpy(), 2 ** x_np)


COMPARISONS = {"==": np.equal, "!=": np.not_equal, "<": np.less, "<=": np.less_equal,
               ">": np.greater, ">=": np.greater_equal}


def _compare(op, a, b):
    return {"==": lambda: a == b, "!=": lambda: a != b, "<": lambda: a < b,
            "<=": lambda: a <= b, ">": lambda: a > b, ">=": lambda: a >= b}[op]()


@pytest.mark.parametrize("op", sorted(COMPARISONS))
def test_comparisons_against_numpy(op):
    # Ties included: y_np and row_np share values with x_np.
    x = mx.nd.array(x_np)
    y_np2 = np.where(np.arange(6).reshape(2, 3) % 2 == 0, x_np, y_np)
    want = COMPARISONS[op]
    for other, other_np in ((mx.nd.array(y_np2), y_np2),   # same shape
                            (mx.nd.array(row_np), row_np),  # broadcast
                            (3.0, 3.0), (-2, -2)):           # scalars
        got = _compare(op, x, other)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.asnumpy(), want(x_np, other_np).astype(np.float32))
    # A number on the left: Python reflects the comparison.
    np.testing.assert_array_equal(_compare(op, 3.0, x).asnumpy(),
                                  want(3.0, x_np).astype(np.float32))


def test_comparison_idioms_and_gradients():
    pred = mx.nd.array([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    label = mx.nd.array([1, 0, 0, 1])
    assert (pred.argmax(axis=1) == label).mean().asscalar() == 0.5
    assert (mx.nd.ones((2,)) == None) is False  # noqa: E711
    assert (mx.nd.ones((2,)) != None) is True  # noqa: E711
    a = mx.nd.array([1.0, 2.0, 3.0])
    np.testing.assert_array_equal(mx.nd.logical_not(a > 1.5).asnumpy(), [1, 0, 0])
    np.testing.assert_array_equal(
        mx.nd.broadcast_logical_and(a > 1.5, a < 2.5).asnumpy(), [0, 1, 0])
    # A mask from a comparison passes no gradient of its own.
    a.attach_grad()
    with mx.autograd.record():
        y = (a > 1.5) * a
    y.backward()
    np.testing.assert_array_equal(a.grad.asnumpy(), [0, 1, 1])


def test_getitem_views_and_slices():
    values = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = mx.nd.array(values)
    np.testing.assert_array_equal(a[1].asnumpy(), values[1])
    np.testing.assert_array_equal(a[-1].asnumpy(), values[-1])
    np.testing.assert_array_equal(a[1:3].asnumpy(), values[1:3])
    np.testing.assert_array_equal(a[:, 2].asnumpy(), values[:, 2])
    np.testing.assert_array_equal(a[1:4:2, 1:5].asnumpy(), values[1:4:2, 1:5])
    np.testing.assert_array_equal(a[2, 3].asnumpy(), np.array([values[2, 3]]))
    with pytest.raises(IndexError):
        a[4]
    with pytest.raises(IndexError):
        a[0, 0, 0]
    # a[i] and a[i:j] share memory with a
    view = a[1:3]
    view[:] = 0
    assert a.asnumpy()[1:3].sum() == 0
    rows = [r.asnumpy() for r in mx.nd.array(values[:2])]
    np.testing.assert_array_equal(np.stack(rows), values[:2])


def test_setitem():
    a = mx.nd.zeros((3, 4))
    a[:] = 2
    a[1] = np.arange(4)
    a[2:3] = mx.nd.ones((1, 4)) * 5
    a[0] = mx.nd.array([7.0])  # broadcast
    np.testing.assert_array_equal(a.asnumpy(), [[7] * 4, [0, 1, 2, 3], [5] * 4])
    with pytest.raises(IndexError):
        a[:, 1] = 3


def test_reshape_is_a_view():
    a = mx.nd.array(np.arange(6, dtype=np.float32))
    b = a.reshape((2, 3))
    assert b.shape == (2, 3) and a.reshape(3, -1).shape == (3, 2)
    b[:] = 1
    assert a.asnumpy().sum() == 6
    assert b.reshape((0, -1)).shape == (2, 3)  # MXNet's special codes, through Reshape


def test_copies():
    a = mx.nd.array(x_np)
    b = a.copy()
    b += 1
    assert_close(a.asnumpy(), x_np)
    c = mx.nd.zeros(a.shape)
    assert a.copyto(c) is c
    assert_close(c.asnumpy(), x_np)
    assert_close(a.copyto(mx.cpu()).asnumpy(), x_np)
    with pytest.raises(mx.MXNetError):
        a.copyto(mx.nd.zeros((3, 3)))


def test_fluent_methods():
    x = mx.nd.array(x_np)
    assert_close(x.sum(axis=1).asnumpy(), x_np.sum(axis=1))
    assert_close(x.relu().asnumpy(), np.maximum(x_np, 0))
    assert_close(x.T.asnumpy(), x_np.T)
    assert_close(x.exp().asnumpy(), np.exp(x_np), rtol=1e-5)
    assert x.flatten().shape == (2, 3) and x.expand_dims(axis=0).shape == (1, 2, 3)
    assert x.argmax(axis=1).asnumpy().tolist() == [2, 1]


def test_gpu_array_without_gpu_is_an_error():
    try:
        a = mx.nd.zeros((2,), ctx=mx.gpu(0))
    except mx.MXNetError as e:
        assert "gpu" in str(e).lower()
    else:  # a CUDA build on a machine with a GPU
        assert a.context == mx.gpu(0)
        assert_close((a + 1).asnumpy(), [1, 1])
        assert_close(a.as_in_context(mx.cpu()).asnumpy(), [0, 0])
