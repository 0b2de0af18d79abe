#!/usr/bin/env python3
"""How far a convolutional network's CPU inference is from the machine's peak.

Runs `mx-predict --benchmark` on an MXNet checkpoint with ONEDNN_VERBOSE=1,
takes every oneDNN primitive executed at the chosen batch, and sets each
group's measured time (per inference, as the primitives ran inside the fused
graph) beside a compute floor:

  * a convolution's floor is its real multiply-adds (taps that fall on the
    padding excluded: oneDNN skips them) at the float32 FMA peak, with every
    stride-1 3x3 convolution counted as Winograd F(4x4, 3x3) (36 products per
    4x4 output tile and channel pair) whose transforms cost nothing;
  * an inner product's floor is its multiply-adds at the peak;
  * neither can take less than reading its float32 weights once at the
    machine's memory bandwidth (the weights of a ResNet-50, 100 MB, do not
    stay in the caches from one inference to the next);
  * BatchNorm, pooling, element-wise work and the activations' reorders are
    memory-bound: their floor is taken as what they measured.

The floor is optimistic on purpose: no kernel reaches the FMA peak and
Winograd's transforms are not free. The peak and the bandwidth are
bench_machine_peak's multi-threaded figures unless --peak and --bandwidth
give them.

With --python and --onnx, ONNX Runtime runs the same model (infer_peer.py)
in the same session, and the table gives its time and the efficiency
(floor / time) of both; issue 11's targets (batch 1: 0.8x the peer's
latency; a larger batch: 1.3x its throughput) are turned into the
efficiency they would need.

  conv_roofline.py --model PREFIX-0000 [--batch 16] [--runs 10] [--repeats 3] [--threads 2]
                   [--peak GFLOPS] [--bandwidth GBS] [--python PY --onnx MODEL.onnx]
PREFIX-0000: e.g. infer_peer.py export-resnet50 DIR's DIR/resnet50_v2-0000.
"""
import argparse
import collections
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "scripts", "bench")


def run(argv, env=None):
    proc = subprocess.run(argv, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"conv_roofline: {' '.join(argv)} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc.stdout + proc.stderr


def machine_peak(build, threads):
    """(FMA peak in GFLOP/s, read bandwidth in GB/s) on `threads` threads."""
    out = run([os.path.join(build, "bench", "bench_machine_peak"), str(threads)])
    rates = [float(m.group(1)) for m in re.finditer(rf"^\s+\w+\s+{threads} threads?\s+([0-9.]+)", out, re.M)]
    bandwidth = re.search(r"memory read bandwidth, \d+ threads: ([0-9.]+) GB/s", out)
    if not rates or not bandwidth:
        sys.exit(f"conv_roofline: no {threads}-thread figures in bench_machine_peak's output:\n{out}")
    return max(rates), float(bandwidth.group(1))


def ms_per_batch(out, batch):
    """mx-predict and infer_peer.py print the same two lines; None when neither is there."""
    if batch == 1:
        m = re.search(r"latency at batch 1: ([0-9.]+) ms", out)
        return float(m.group(1)) if m else None
    m = re.search(rf"throughput at batch {batch}: [0-9.]+ samples/s \(([0-9.]+) ms per batch", out)
    return float(m.group(1)) if m else None


def timed(argv, env, batch):
    """Milliseconds per batch of one benchmark run of `argv`."""
    out = run(argv, env)
    ms = ms_per_batch(out, batch)
    if ms is None:
        sys.exit(f"conv_roofline: no batch-{batch} timing in the output of {' '.join(argv)}:\n{out[-2000:]}")
    return ms


def taps(size_in, size_out, kernel, stride, pad):
    """Kernel taps that land inside the input, summed over the output positions."""
    return sum(1 for o in range(size_out) for k in range(kernel) if 0 <= o * stride + k - pad < size_in)


def dims(problem):
    return {k: int(v) for k, v in re.findall(r"([a-z]+)(\d+)", problem)}


def convolution_floor(problem):
    """(floor FLOPs, weight bytes) of one convolution."""
    d = dims(problem)
    mb, g, ic, oc = d["mb"], d.get("g", 1), d["ic"], d["oc"]
    ih, oh, kh, sh, ph = d["ih"], d["oh"], d.get("kh", 1), d.get("sh", 1), d.get("ph", 0)
    iw, ow, kw, sw, pw = d.get("iw", ih), d.get("ow", oh), d.get("kw", kh), d.get("sw", sh), d.get("pw", ph)
    winograd = (kh, kw, sh, sw, g) == (3, 3, 1, 1, 1) and d.get("dh", 0) == 0 and d.get("dw", 0) == 0
    weight_bytes = 4 * (ic // g) * oc * kh * kw
    if winograd:
        return 2 * mb * ic * oc * ((oh + 3) // 4) * ((ow + 3) // 4) * 36, weight_bytes
    return 2 * mb * (ic // g) * oc * taps(ih, oh, kh, sh, ph) * taps(iw, ow, kw, sw, pw), weight_bytes


def group_of(primitive, implementation, problem):
    if primitive != "convolution":
        return primitive
    if "wino" in implementation:
        return "convolution, Winograd"
    return "convolution, 1x1" if re.search(r"kh1(?!\d)", problem) else "convolution, other"


def analyse(log, batch, peak_gflops, bandwidth_gbs):
    """Measured and floor milliseconds per inference, by group, for the primitives at `batch`."""
    lines = [line.strip().split(",") for line in log.splitlines() if line.startswith("onednn_verbose,exec,cpu,")]
    at_batch = []
    for f in lines:
        primitive, implementation, problem, ms = f[3], f[4], f[-2], float(f[-1])
        if primitive == "reorder":
            shape_batch = problem.split("x", 1)[0]
            if shape_batch != str(batch):
                continue
        else:
            m = re.search(r"mb(\d+)", problem)
            if not m or int(m.group(1)) != batch:
                continue
        at_batch.append((primitive, implementation, problem, ms))
    convolutions = [p for p in at_batch if p[0] == "convolution"]
    if not convolutions:
        sys.exit(f"conv_roofline: no convolution ran at batch {batch} (is the model a convolutional network?)")
    executions = sum(1 for p in convolutions if p[2] == convolutions[0][2])
    counts = collections.Counter((p[0], p[1], p[2]) for p in at_batch)
    measured, floor = collections.defaultdict(float), collections.defaultdict(float)
    for primitive, implementation, problem, ms in at_batch:
        # One-time work (weights reordered when the graph is prepared) runs
        # fewer times than the graph does.
        if counts[(primitive, implementation, problem)] < executions:
            continue
        group = group_of(primitive, implementation, problem)
        measured[group] += ms / executions
        if primitive in ("convolution", "inner_product"):
            if primitive == "convolution":
                flops, weight_bytes = convolution_floor(problem)
            else:
                d = dims(problem)
                spatial = d.get("ih", 1) * d.get("iw", 1)
                flops, weight_bytes = 2 * d["mb"] * d["ic"] * d["oc"] * spatial, 4 * d["ic"] * d["oc"] * spatial
            ms_floor = max(flops / (peak_gflops * 1e6), weight_bytes / (bandwidth_gbs * 1e6))
            floor[group] += ms_floor / executions
        else:
            floor[group] += ms / executions
    return measured, floor, executions


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--model", required=True, help="MXNet checkpoint PREFIX-NNNN")
    p.add_argument("--data-shape", default="3,224,224")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--peak", type=float, help="float32 FMA peak in GFLOP/s (default: bench_machine_peak)")
    p.add_argument("--bandwidth", type=float, help="memory read bandwidth in GB/s (default: bench_machine_peak)")
    p.add_argument("--repeats", type=int, default=3, help="alternating plain runs of mx and the peer (median)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--python", help="python with onnxruntime (the ONNX Runtime column)")
    p.add_argument("--onnx", help="the same model as ONNX (mx-export), for ONNX Runtime")
    a = p.parse_args()
    if a.repeats < 1:
        p.error("--repeats must be at least 1")
    if a.runs < 3:
        p.error("--runs must be at least 3 (one-time work is told apart by running fewer times)")
    if bool(a.python) != bool(a.onnx):
        p.error("--python and --onnx go together")

    env = dict(os.environ, MX_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads))
    peak, bandwidth = a.peak, a.bandwidth
    if not peak or not bandwidth:
        measured_peak, measured_bandwidth = machine_peak(a.build, a.threads)
        peak, bandwidth = peak or measured_peak, bandwidth or measured_bandwidth
    predict = [os.path.join(a.build, "cmd", "mx-predict"), "-m", a.model, "--data-shape", a.data_shape,
               "--benchmark", str(a.runs), "--batch-size", str(a.batch)]
    verbose_log = run(predict, dict(env, ONEDNN_VERBOSE="1"))
    measured, floor, executions = analyse(verbose_log, a.batch, peak, bandwidth)
    plain, peer = [], []
    for _ in range(a.repeats):  # alternating, as the machine's load drifts
        plain.append(timed(predict, env, a.batch))
        if a.python:
            peer.append(timed([a.python, os.path.join(BENCH, "infer_peer.py"), "ort", a.onnx, "--batch",
                               str(a.batch), "--runs", str(a.runs), "--threads", str(a.threads)], env, a.batch))

    print(f"Batch {a.batch}, {a.threads} threads, median of {a.repeats} alternating runs, "
          f"float32 FMA peak {peak:.1f} GFLOP/s, memory read {bandwidth:.1f} GB/s; "
          f"{executions} runs of the graph under ONEDNN_VERBOSE. Milliseconds per batch.")
    print()
    print("| primitives | measured in the graph | floor | floor / measured |")
    print("| --- | ---: | ---: | ---: |")
    for group in sorted(measured, key=lambda g: -measured[g]):
        print(f"| {group} | {measured[group]:.2f} | {floor[group]:.2f} | {floor[group] / measured[group]:.0%} |")
    total_measured, total_floor = sum(measured.values()), sum(floor.values())
    print(f"| all | {total_measured:.2f} | {total_floor:.2f} | {total_floor / total_measured:.0%} |")
    print()
    rows = [("mx-predict (no verbose)", statistics.median(plain))]
    if peer:
        rows.append(("ONNX Runtime", statistics.median(peer)))
        target = 0.8 * rows[-1][1] if a.batch == 1 else rows[-1][1] / 1.3
        what = "0.8x its latency" if a.batch == 1 else "1.3x its throughput"
        rows.append((f"issue 11's target ({what})", target))
    print("| run | ms per batch | efficiency (floor / time) |")
    print("| --- | ---: | ---: |")
    for name, ms in rows:
        print(f"| {name} | {ms:.2f} | {total_floor / ms:.0%} |")


if __name__ == "__main__":
    main()
