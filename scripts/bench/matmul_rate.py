#!/usr/bin/env python3
"""A CPU's matrix-product rate in float32 and bfloat16 through PyTorch (its
oneDNN/MKL kernels): the ceiling any framework's products meet on the
machine, and whether bfloat16 products are faster than float32 there
(AVX512-BF16 without AMX may not be).

Usage: matmul_rate.py [--threads T] [--m M] [--k K] [--n N] [--repeats R]
Prints one line per type: GFLOP/s of an (M x K) by (K x N) product, the
mean of R products after three warm-ups.
"""
import argparse
import os
import time

import torch


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--m", type=int, default=2048)
    p.add_argument("--k", type=int, default=1024)
    p.add_argument("--n", type=int, default=1024)
    p.add_argument("--repeats", type=int, default=20)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    for dtype in (torch.float32, torch.bfloat16):
        x = torch.randn(a.m, a.k, dtype=dtype)
        w = torch.randn(a.k, a.n, dtype=dtype)
        for _ in range(3):
            x @ w
        start = time.perf_counter()
        for _ in range(a.repeats):
            x @ w
        seconds = (time.perf_counter() - start) / a.repeats
        print(f"{str(dtype).replace('torch.', '')}: {2 * a.m * a.k * a.n / seconds / 1e9:.0f} GFLOP/s "
              f"({a.m}x{a.k} by {a.k}x{a.n}, {a.threads} threads)")


if __name__ == "__main__":
    main()
