#!/usr/bin/env python3
"""A distributed job in Python: workers train a linear regression on their
own shards of the data, with the weights on mx-serve-ps parameter servers
(MXNet's dist KVStore API, run by mpirun):

    mpirun --oversubscribe -np 1 mx-serve-ps : -np 2 python3 dist_kvstore.py [dist_sync|dist_async]

Each worker checks that init takes worker 0's values and (dist_sync) that
the servers sum the workers' pushes, then sets SGD on the servers and runs
100 steps of pull weights / gradient by autograd / push gradient. It prints
"dist_kvstore RANK: ok" when the weights it pulls at the end are within
0.05 of the true ones.
"""
import sys

import numpy as np

import mx

DIM, ROWS, STEPS = 8, 64, 100


def fail(rank, message):
    print(f"dist_kvstore {rank}: {message}", file=sys.stderr, flush=True)
    sys.exit(1)


def main():
    kind = sys.argv[1] if len(sys.argv) > 1 else "dist_sync"
    kv = mx.kv.create(kind)
    rank, workers = kv.rank, kv.num_workers
    print(f"dist_kvstore {rank}: {kv.type}, {workers} workers", flush=True)

    # init: every worker calls it (in the same order); worker 0's value wins
    kv.init("w", mx.nd.full((DIM,), 10.0 * rank))
    w = mx.nd.zeros((DIM,))
    kv.pull("w", out=w)
    if np.abs(w.asnumpy()).max() != 0:
        fail(rank, f"init: pulled {w.asnumpy()}, expected worker 0's zeros")

    if kind == "dist_sync":
        # without an optimizer, the servers keep the sum of the workers' pushes
        kv.init("check", mx.nd.zeros((3,)))
        kv.push("check", mx.nd.ones((3,)) * (rank + 1))
        total = mx.nd.zeros((3,))
        kv.pull("check", out=total)
        expected = workers * (workers + 1) / 2
        if not np.allclose(total.asnumpy(), expected):
            fail(rank, f"push: pulled {total.asnumpy()}, expected the sum {expected}")

    # this worker's shard of y = X w_true + noise
    w_true = np.random.RandomState(0).uniform(-1, 1, DIM)
    rng = np.random.RandomState(1 + rank)
    X = rng.randn(ROWS, DIM)
    y = X @ w_true + 0.01 * rng.randn(ROWS)
    X, y = mx.nd.array(X), mx.nd.array(y)

    # SGD on the servers; gradients are averaged over the rows and the workers
    kv.set_optimizer(mx.optimizer.SGD(learning_rate=0.2, rescale_grad=1.0 / (ROWS * workers)))
    grad = mx.nd.zeros((DIM,))
    for _ in range(STEPS):
        kv.pull("w", out=w)
        w.attach_grad()
        with mx.autograd.record():
            residual = mx.nd.dot(X, w) - y
            loss = 0.5 * mx.nd.sum(residual * residual)
        loss.backward()
        w.grad.copyto(grad)
        kv.push("w", grad)
    kv.barrier()
    kv.pull("w", out=w)
    error = np.abs(w.asnumpy() - w_true).max()
    if error > 0.05:
        fail(rank, f"the weights are {error:.3f} from the true ones after {STEPS} steps")
    print(f"dist_kvstore {rank}: max weight error {error:.4f}", flush=True)
    kv.close()  # meets the other workers, then the servers stop
    print(f"dist_kvstore {rank}: ok", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
