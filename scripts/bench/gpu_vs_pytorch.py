#!/usr/bin/env python3
"""mx against PyTorch on one GPU, float32 (or mixed precision), side by side in one run.

Rows (each runs mx and PyTorch alternately, --repeats times, every run a
separate process, and reports the median with the spread (min-max), and the
speed ratio, > 1 when mx is faster):
  resnet50-train  configs/resnet50-synthetic.yaml, batch 64, 3x224x224
                  synthetic data: mx-train vs gpu_pytorch.py, images/s of the
                  second epoch (the first warms up: cuDNN algorithm choice)
  resnet18-train  configs/resnet18-cifar.yaml, batch 128, 3x32x32 synthetic
                  data, the same way
  resnet50-infer  the ResNet-50 of the config (a checkpoint of one mx-train
                  batch): mx-predict --benchmark vs gpu_pytorch.py,
                  latency at batch 1 and throughput at batch 64

Usage (through scripts/bench/gpu_vs_pytorch.sh, which names the build):
  gpu_vs_pytorch.py --python PY [--build DIR] [--repeats 3] [--quick] [--rows a,b] [--tf32]
                    [--precision float16|bfloat16]
--tf32 lets both sides run float32 on TF32 tensor cores (mx: MX_GPU_TF32=1).
--precision trains the training rows in mixed precision: mx's
train.precision against torch.autocast (float16: mx's dynamic loss scale
against GradScaler's).
PY has torch with CUDA. The GPU is found with nvidia-smi (--nvidia-smi or
$NVIDIA_SMI names another program); without one the script says so and
exits with 1 before running anything.
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "scripts", "bench")
ROWS = ["resnet50-train", "resnet18-train", "resnet50-infer"]


class NoGpu(Exception):
    pass


def parse_args(argv):
    p = argparse.ArgumentParser(prog="gpu_vs_pytorch.py", description="mx against PyTorch on one GPU")
    p.add_argument("--python", required=True, help="a python with torch (CUDA)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"), help="mx build folder")
    p.add_argument("--repeats", type=int, default=3, help="runs of each side per row")
    p.add_argument("--quick", action="store_true", help="fewer batches and runs (a smoke test)")
    p.add_argument("--tf32", action="store_true", help="TF32 tensor cores on for both sides")
    p.add_argument("--precision", choices=["float32", "float16", "bfloat16"], default="float32",
                   help="training rows in mixed precision: mx's train.precision against "
                        "PyTorch's torch.autocast (float16: both with dynamic loss scaling)")
    p.add_argument("--rows", default=",".join(ROWS), help="comma-separated: " + ", ".join(ROWS))
    p.add_argument("--nvidia-smi", default=os.environ.get("NVIDIA_SMI", "nvidia-smi"),
                   help="the program that lists the GPUs")
    a = p.parse_args(argv)
    a.rows = [r for r in a.rows.split(",") if r]
    if a.precision != "float32" and "resnet50-infer" in a.rows:
        p.error("--precision is for the training rows; leave resnet50-infer out of --rows")
    unknown = [r for r in a.rows if r not in ROWS]
    if unknown:
        p.error(f"unknown row(s) {', '.join(unknown)}; rows are {', '.join(ROWS)}")
    if a.repeats < 1:
        p.error("--repeats must be at least 1")
    return a


def gpu_name(nvidia_smi):
    """The first GPU's name, or NoGpu saying why there is none."""
    try:
        out = subprocess.run([nvidia_smi, "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise NoGpu(f"no GPU found: {nvidia_smi} could not run ({e})")
    names = [line.strip() for line in out.stdout.splitlines() if line.strip()]
    if out.returncode != 0 or not names:
        raise NoGpu(f"no GPU found: {nvidia_smi} lists none (exit code {out.returncode})")
    return names[0]


def spread(values):
    median = statistics.median(values)
    digits = 1 if median >= 10 else 2
    return f"{median:.{digits}f} ({min(values):.{digits}f}–{max(values):.{digits}f})"


class Row:
    def __init__(self, name, unit, mx, peer, higher_is_better):
        self.name, self.unit, self.mx, self.peer, self.higher = name, unit, mx, peer, higher_is_better

    def ratio(self):
        """mx's speed over PyTorch's (> 1: mx faster)."""
        mx, peer = statistics.median(self.mx), statistics.median(self.peer)
        return mx / peer if self.higher else peer / mx

    def markdown(self):
        return f"| {self.name} | {self.unit} | {spread(self.mx)} | {spread(self.peer)} | {self.ratio():.2f}× |"


def summary(rows, gpu, pytorch, command, when, tf32=False, precision="float32"):
    arithmetic = (f"float32 (TF32 {'on' if tf32 else 'off'})" if precision == "float32" else
                  f"{precision} mixed precision (mx train.precision, PyTorch torch.autocast)")
    lines = [f"GPU: {gpu}; PyTorch {pytorch}; {arithmetic}; {when}", f"Command: `{command}`", "",
             "| benchmark | unit | mx | PyTorch | ratio |", "| --- | --- | --- | --- | --- |"]
    lines += [r.markdown() for r in rows]
    lines += ["", "Figures: median (min–max) of the runs, mx and PyTorch alternating; "
                  "ratio: mx's speed over PyTorch's (> 1: mx faster)."]
    return "\n".join(lines)


def command_line(a):
    """The command that reruns these rows, for the table's header."""
    words = ["scripts/bench/gpu_vs_pytorch.sh", "PYTHON"]
    if a.quick:
        words.append("--quick")
    if a.tf32:
        words.append("--tf32")
    if a.precision != "float32":
        words += ["--precision", a.precision]
    if a.repeats != 3:
        words += ["--repeats", str(a.repeats)]
    if a.rows != ROWS:
        words += ["--rows", ",".join(a.rows)]
    return " ".join(words)


def run(argv, work, env=None):
    """Runs a program; its stdout, or RuntimeError with its stderr's end."""
    proc = subprocess.run([str(x) for x in argv], capture_output=True, text=True, cwd=work, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, argv))} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc.stdout


def number(text, prefix, suffix):
    """The number between `prefix` and `suffix` on the first line holding both
    (an empty prefix: the last word before `suffix`)."""
    for line in text.splitlines():
        if prefix in line and suffix in line:
            before = line.split(prefix, 1)[1] if prefix else line
            return float(before.split(suffix, 1)[0].split()[-1])
    raise RuntimeError(f"no '{prefix} ... {suffix}' in:\n{text[-2000:]}")


class Bench:
    def __init__(self, a, work):
        self.a, self.work = a, work
        self.mx_train = os.path.join(a.build, "cmd", "mx-train")
        self.mx_predict = os.path.join(a.build, "cmd", "mx-predict")
        self.pytorch = "?"
        # mx's TF32 switch is its environment; PyTorch's, a flag of the peer.
        self.mx_env = dict(os.environ, MX_GPU_TF32="1" if a.tf32 else "0")
        self.peer_flags = ["--tf32"] if a.tf32 else []
        self.precision = [f"train.precision={a.precision}"]

    def peer(self, *args):
        out = run([self.a.python, os.path.join(BENCH, "gpu_pytorch.py"), *args, *self.peer_flags], self.work)
        self.pytorch = out.splitlines()[0].split()[1]
        return out

    def mx_train_rate(self, config, overrides, run_dir=None):
        keep = run_dir is not None
        run_dir = run_dir or os.path.join(self.work, "mx-train-run")
        run([self.mx_train, os.path.join(ROOT, "configs", config), "train.devices=[gpu:0]", *overrides,
             "--run-dir", run_dir], self.work, self.mx_env)
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            rate = [json.loads(line)["samples_per_sec"] for line in f if line.strip()][-1]
        if not keep:
            shutil.rmtree(run_dir)
        return rate

    def train_row(self, name, config, mode, batch, batches):
        mx, peer = [], []
        for _ in range(self.a.repeats):
            mx.append(self.mx_train_rate(config, ["train.epochs=2", f"train.batch_size={batch}",
                                                  f"data.train.num_batches={batches}", *self.precision]))
            amp = ["--amp", self.a.precision] if self.a.precision != "float32" else []
            out = self.peer(mode, "--batch", batch, "--batches", batches, *amp)
            peer.append(number(out, "", "samples/s"))
        return [Row(f"{name} train, batch {batch} (synthetic data)", "images/s", mx, peer, True)]

    def infer_rows(self, batch, runs):
        model = os.path.join(self.work, "resnet50-checkpoint")
        self.mx_train_rate("resnet50-synthetic.yaml",
                           ["train.epochs=1", "train.batch_size=2", "data.train.num_batches=1"], model)
        latency = {"mx": [], "peer": []}
        throughput = {"mx": [], "peer": []}
        for _ in range(self.a.repeats):
            out = run([self.mx_predict, "-m", model, "--data-shape", "3,224,224", "--device", "gpu:0",
                       "--benchmark", runs, "--batch-size", batch], self.work, self.mx_env)
            peer = self.peer("infer-resnet50", "--batch", batch, "--runs", runs)
            for side, text in [("mx", out), ("peer", peer)]:
                latency[side].append(number(text, "latency at batch 1:", "ms"))
                throughput[side].append(number(text, f"throughput at batch {batch}:", "samples/s"))
        return [Row("ResNet-50 inference, batch 1 latency", "ms", latency["mx"], latency["peer"], False),
                Row(f"ResNet-50 inference, batch {batch} throughput", "images/s", throughput["mx"],
                    throughput["peer"], True)]


def main(argv):
    a = parse_args(argv)
    try:
        gpu = gpu_name(a.nvidia_smi)
    except NoGpu as e:
        print(f"gpu_vs_pytorch: {e}; the GPU benchmarks need a CUDA GPU", file=sys.stderr)
        return 1
    for program in ["mx-train", "mx-predict"]:
        if not os.path.exists(os.path.join(a.build, "cmd", program)):
            print(f"gpu_vs_pytorch: {os.path.join(a.build, 'cmd', program)} not found: build mx "
                  "with CUDA first (scripts/gpu-check.sh)", file=sys.stderr)
            return 1
    work = tempfile.mkdtemp(prefix="mx-gpu-bench-")
    try:
        b = Bench(a, work)
        rows = []
        if "resnet50-train" in a.rows:
            rows += b.train_row("ResNet-50", "resnet50-synthetic.yaml", "train-resnet50", 64, 5 if a.quick else 30)
        if "resnet18-train" in a.rows:
            rows += b.train_row("ResNet-18 CIFAR", "resnet18-cifar.yaml", "train-resnet18", 128,
                                10 if a.quick else 100)
        if "resnet50-infer" in a.rows:
            rows += b.infer_rows(64, 3 if a.quick else 20)
    except RuntimeError as e:
        print(f"gpu_vs_pytorch: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    command = command_line(a)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    print(summary(rows, gpu, b.pytorch, command, when, a.tf32, a.precision))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
