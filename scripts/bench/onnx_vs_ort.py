"""mx-predict --benchmark next to ONNX Runtime on the same ONNX models.

For each model, ROUNDS rounds alternate the two: mx-predict (a separate
process, MX_NUM_THREADS=THREADS) and an ONNX Runtime session in this process
(intra-op THREADS, inter-op 1, default graph optimizations). Each measures
as mx-predict --benchmark does: one warm-up run, then the mean of RUNS runs
on an input filled with 0.5, at batch 1 (latency) and at BATCH
(throughput). The table gives the median over rounds. Model loading and
session creation are not timed.

Run it through scripts/bench/onnx_vs_ort.sh, which names the python.
"""
import argparse
import os
import re
import statistics
import subprocess
import time

import numpy as np
import onnxruntime as ort


def mx_round(mx_predict, model, threads, runs, batch):
    env = dict(os.environ, MX_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads))
    out = subprocess.run(
        [mx_predict, "-m", model, "--benchmark", str(runs), "--batch-size", str(batch)],
        check=True, capture_output=True, text=True, env=env).stdout
    latency = float(re.search(r"latency at batch 1: ([0-9.]+) ms", out).group(1))
    per_batch = float(re.search(r"\(([0-9.]+) ms per batch", out).group(1))
    return latency, batch / (per_batch / 1000)


def ort_session(model, threads):
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    return ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def ort_seconds_per_batch(session, batch, runs):
    info = session.get_inputs()[0]
    example = [int(d) for d in info.shape[1:]]
    feed = {info.name: np.full([batch] + example, 0.5, dtype=np.float32)}
    session.run(None, feed)  # warm up
    start = time.perf_counter()
    for _ in range(runs):
        session.run(None, feed)
    return (time.perf_counter() - start) / runs


def ort_round(session, runs, batch):
    one = ort_seconds_per_batch(session, 1, runs)
    many = ort_seconds_per_batch(session, batch, runs)
    return one * 1000, batch / many


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mx-predict", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("models", nargs="+", help="NAME=MODEL.onnx")
    a = p.parse_args()

    print(f"onnxruntime {ort.__version__}, {a.threads} threads, median of {a.rounds} "
          f"alternating rounds, each the mean of {a.runs} runs after one warm-up")
    print()
    print(f"| model | mx latency, batch 1 (ms) | ORT latency, batch 1 (ms) | "
          f"mx throughput, batch {a.batch} (samples/s) | ORT throughput, batch {a.batch} (samples/s) |")
    print("|---|---:|---:|---:|---:|")
    for spec in a.models:
        name, model = spec.split("=", 1)
        session = ort_session(model, a.threads)
        mx, ox = [], []
        for _ in range(a.rounds):
            mx.append(mx_round(a.mx_predict, model, a.threads, a.runs, a.batch))
            ox.append(ort_round(session, a.runs, a.batch))
        med = lambda rows, k: statistics.median(r[k] for r in rows)
        print(f"| {name} | {med(mx, 0):.3f} | {med(ox, 0):.3f} | {med(mx, 1):.1f} | {med(ox, 1):.1f} |",
              flush=True)


if __name__ == "__main__":
    main()
