"""mx.kv: local and device stores in one process (the dist stores run under
mpirun: examples/python/dist_kvstore.py, ctest python_example_dist_kvstore)."""
import numpy as np
import pytest

import mx
from conftest import assert_close


@pytest.mark.parametrize("kind", ["local", "device"])
def test_init_push_pull(kind):
    kv = mx.kv.create(kind)
    assert kv.type == kind and kv.rank == 0 and kv.num_workers == 1
    kv.init(3, mx.nd.ones((2, 3)))
    out = mx.nd.zeros((2, 3))
    kv.pull(3, out=out)
    assert_close(out.asnumpy(), np.ones((2, 3)))
    # values pushed for one key (one per device) are summed and replace the value
    kv.push(3, [mx.nd.ones((2, 3)) * 2, mx.nd.ones((2, 3)) * 5])
    kv.pull(3, out=out)
    assert_close(out.asnumpy(), np.full((2, 3), 7.0))
    # several keys at once, pulled into several arrays each
    kv.init([5, 6], [mx.nd.zeros(2), mx.nd.ones(2)])
    outs = [mx.nd.zeros(2), mx.nd.zeros(2)]
    kv.pull([5, 6], out=[outs[0], outs[1]])
    assert_close(outs[1].asnumpy(), [1, 1])
    a, b = mx.nd.zeros(2), mx.nd.zeros(2)
    kv.pull(6, out=[a, b])
    assert_close(a.asnumpy(), [1, 1])
    assert_close(b.asnumpy(), [1, 1])
    kv.barrier()
    kv.close()


def test_str_keys_and_pushpull():
    kv = mx.kv.create("local")
    kv.init("fc1_weight", mx.nd.ones(3))
    kv.init(["b", "c"], [mx.nd.zeros(1), mx.nd.zeros(1)])
    v = mx.nd.array([1.0, 2.0, 3.0])
    kv.pushpull("fc1_weight", v)
    assert_close(v.asnumpy(), [1, 2, 3])
    with pytest.raises(mx.MXNetError, match="'nope' was not initialized"):
        kv.push("nope", mx.nd.ones(1))


def test_optimizer_runs_in_the_store():
    kv = mx.kv.create("local")
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.5, rescale_grad=1.0))
    kv.init(0, mx.nd.array([1.0, 2.0]))
    kv.push(0, mx.nd.array([1.0, 1.0]))
    out = mx.nd.zeros(2)
    kv.pull(0, out=out)
    assert_close(out.asnumpy(), [0.5, 1.5])
    kv.push(0, [mx.nd.array([1.0, 0.0]), mx.nd.array([1.0, 2.0])])  # summed, then one step
    kv.pull(0, out=out)
    assert_close(out.asnumpy(), [-0.5, 0.5])


def test_errors():
    with pytest.raises(mx.MXNetError, match="nonsense"):
        mx.kv.create("nonsense")
    kv = mx.kv.create()
    with pytest.raises(mx.MXNetError):
        kv.pull(42, out=mx.nd.zeros(1))
    kv.init(1, mx.nd.zeros(2))
    with pytest.raises(mx.MXNetError):
        kv.push(1, mx.nd.zeros(5))
        mx.nd.waitall()
    with pytest.raises(mx.MXNetError, match="2 keys but 1 values"):
        kv.push([1, 2], [mx.nd.zeros(2)])
    with pytest.raises(TypeError):
        kv.push(1.5, mx.nd.zeros(2))
