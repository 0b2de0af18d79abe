"""mx.autograd: recorded calls differentiated, against central finite
differences in float64; the switches; head gradients; grad_req; errors."""
import numpy as np
import pytest

import mx
from conftest import assert_close


def numeric_grad(f, values, eps=1e-6):
    """Central differences of the scalar f(values) with respect to each element."""
    grad = np.zeros_like(values)
    flat, gflat = values.reshape(-1), grad.reshape(-1)
    for i in range(flat.size):
        keep = flat[i]
        flat[i] = keep + eps
        up = f(values)
        flat[i] = keep - eps
        down = f(values)
        flat[i] = keep
        gflat[i] = (up - down) / (2 * eps)
    return grad


def mlp_loss(x, w1, b1, w2, b2):
    h = mx.nd.Activation(mx.nd.FullyConnected(x, w1, b1, num_hidden=w1.shape[0]),
                         act_type="tanh")
    y = mx.nd.FullyConnected(h, w2, b2, num_hidden=w2.shape[0])
    return mx.nd.sum(y * y + mx.nd.sigmoid(y)) / 3.0 - 0.5 * mx.nd.mean(h)


def test_mlp_gradients_against_finite_differences():
    rng = np.random.RandomState(0)
    values = [rng.randn(4, 5), rng.randn(3, 5), rng.randn(3), rng.randn(2, 3), rng.randn(2)]
    arrays = [mx.nd.array(v, dtype=np.float64) for v in values]
    for a in arrays[1:]:
        a.attach_grad()
    with mx.autograd.record():
        loss = mlp_loss(*arrays)
    loss.backward()
    for k in range(1, 5):
        def f(v, k=k):
            args = list(arrays)
            args[k] = mx.nd.array(v, dtype=np.float64)
            return mlp_loss(*args).asscalar()
        expected = numeric_grad(f, values[k].copy())
        assert_close(arrays[k].grad.asnumpy(), expected, rtol=1e-5, atol=1e-7)


def test_head_gradients_and_broadcast_arithmetic():
    rng = np.random.RandomState(1)
    x_np, row_np, head_np = rng.randn(3, 4), rng.randn(4), rng.randn(3, 4)
    x, row = mx.nd.array(x_np, dtype=np.float64), mx.nd.array(row_np, dtype=np.float64)
    x.attach_grad()
    row.attach_grad()
    with mx.autograd.record():
        y = (x * row + 2.0) / (1.5 - row) - x
    y.backward(mx.nd.array(head_np, dtype=np.float64))
    assert_close(x.grad.asnumpy(), head_np * (row_np / (1.5 - row_np) - 1))
    d_row = head_np * (x_np * (1.5 - row_np) + (x_np * row_np + 2.0)) / (1.5 - row_np) ** 2
    assert_close(row.grad.asnumpy(), d_row.sum(axis=0))


def test_several_heads_and_autograd_backward():
    a = mx.nd.array([1.0, 2.0])
    a.attach_grad()
    with mx.autograd.record():
        u = a * 3.0
        v = a * a
    mx.autograd.backward([u, v], [mx.nd.ones(2), mx.nd.array([10.0, 10.0])])
    assert_close(a.grad.asnumpy(), [3 + 20, 3 + 40])


def test_grad_req_add_and_null():
    a = mx.nd.array([1.0, 2.0])
    a.attach_grad(grad_req="add")
    for _ in range(3):
        with mx.autograd.record():
            y = a * 2.0
        y.backward()
    assert_close(a.grad.asnumpy(), [6, 6])
    b = mx.nd.array([1.0])
    b.attach_grad(grad_req="null")
    assert b.grad is None
    assert mx.nd.ones(2).grad is None


def test_autograd_grad_returns_new_arrays():
    a = mx.nd.array([1.0, 2.0, 3.0])
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(a * a)
    (g,) = mx.autograd.grad(y, [a])
    assert_close(g.asnumpy(), [2, 4, 6])
    assert_close(a.grad.asnumpy(), [0, 0, 0])


def test_switches():
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()
    with mx.autograd.record():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with mx.autograd.pause():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        with mx.autograd.predict_mode():
            assert mx.autograd.is_recording() and not mx.autograd.is_training()
    with mx.autograd.record(train_mode=False):
        assert not mx.autograd.is_training()
    with mx.autograd.train_mode():
        assert mx.autograd.is_training() and not mx.autograd.is_recording()
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()


def test_dropout_follows_training_mode():
    x = mx.nd.ones((1000,))
    assert_close(mx.nd.Dropout(x, p=0.5).asnumpy(), np.ones(1000))  # predicting: identity
    with mx.autograd.train_mode():
        dropped = mx.nd.Dropout(x, p=0.5).asnumpy()
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 300 < (dropped == 0).sum() < 700
    # its gradient is the mask its forward pass drew
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Dropout(x, p=0.5)
    y.backward()
    assert_close(x.grad.asnumpy(), y.asnumpy())


def test_paused_calls_and_detach_are_constants():
    a = mx.nd.array([2.0])
    a.attach_grad()
    with mx.autograd.record():
        with mx.autograd.pause():
            c = a * 5.0
        y = a * c + a.detach() * a
    y.backward()
    assert_close(a.grad.asnumpy(), [10 + 2])


def test_indexing_and_reshape_while_recording():
    a = mx.nd.array(np.arange(6.0).reshape(2, 3))
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.sum(a[1] * 2.0) + mx.nd.sum(a.reshape((3, 2))[0] * 3.0)
    y.backward()
    assert_close(a.grad.asnumpy(), [[3, 3, 0], [2, 2, 2]])


def test_errors():
    a = mx.nd.array([1.0])
    a.attach_grad()
    with mx.autograd.record():
        y = a * 2.0
    y.backward()
    with pytest.raises(mx.MXNetError, match="retain_graph"):
        y.backward()
    with pytest.raises(ValueError, match="grad_req"):
        a.attach_grad(grad_req="sometimes")
    with pytest.raises(mx.MXNetError):
        mx.autograd.grad(y, [a], create_graph=True)
