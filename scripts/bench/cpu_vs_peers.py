#!/usr/bin/env python3
"""mx against its CPU peers, row by row, in one run (the table of issue 11).

Each row runs mx and its peer(s) alternately, REPEATS times, every run a
separate process with the same thread count (MX_NUM_THREADS, OMP_NUM_THREADS,
torch.set_num_threads, ONNX Runtime's intra-op threads), and reports the
median with the spread (min-max) of the runs, the speed ratio and the peak
resident memory (ru_maxrss of each process, as wait4 reports it) of both.

Rows:
  lenet-tanh  configs/lenet-fashion-mnist.yaml, train, batch 64, one epoch of
              Fashion-MNIST: mx-train vs PyTorch (lenet_pytorch.py), samples/s
  lenet-relu  the same with ReLU (configs/lenet-relu-fashion-mnist.yaml when
              it exists, else the tanh config with act_type relu)
  resnet18    configs/resnet18-cifar.yaml, train, batch 32, synthetic 3x32x32
              data for both (CIFAR-10 is not shipped): mx-train vs PyTorch
              (resnet18_cifar_pytorch.py), samples/s
  resnet50    MXNet Gluon model_zoo resnet50_v2 (random weights) exported to a
              temporary folder as an MXNet checkpoint and, by mx-export, as
              ONNX: mx-predict --benchmark vs MXNet 1.9.1 (oneDNN) and ONNX
              Runtime (infer_peer.py), batch-1 latency and batch-16 throughput
  resnet50-bf16  the same model in bfloat16: mx-predict --precision bf16 vs
              MXNet 1.9.1's bfloat16 AMP, and vs ONNX Runtime in float32 (it
              has no bfloat16 convolutions on the CPU); skipped on CPUs
              without bfloat16 instructions
  resnet50-int8  MXNet Gluon's resnet50_v1 (random weights) quantized by
              mx-quantize and, exported by mx-export, by ONNX Runtime's own
              quantizer (QDQ, per-channel weights), both on the same 64
              synthetic calibration images (int8_peer.py): mx-predict int8 vs
              mx float32 and vs ONNX Runtime int8; below the table, each
              int8 model's top-1 agreement and relative error against its
              float32 model on 64 other images

Usage (through scripts/bench/cpu_vs_peers.sh, which names the build):
  cpu_vs_peers.py --python PY [--mxnet-python PY] [--quick] [--rows a,b]
PY has torch, onnxruntime and numpy; the MXNet python has mxnet 1.9.1 (a
separate venv: MXNet 1.9.1 needs numpy < 2). Without --mxnet-python the
resnet50 row is skipped (MXNet makes the model).
"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCH = os.path.join(ROOT, "scripts", "bench")


class Child:
    """One finished process: its output and its peak resident memory."""

    def __init__(self, argv, env, work):
        out_path, err_path = os.path.join(work, "stdout"), os.path.join(work, "stderr")
        with open(out_path, "w") as out, open(err_path, "w") as err:
            proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
        self.stdout = open(out_path).read()
        self.max_rss_mib = usage.ru_maxrss / 1024  # KiB on Linux
        if proc.returncode != 0:
            tail = open(err_path).read()[-2000:]
            raise RuntimeError(f"{' '.join(argv)} exited with {proc.returncode}:\n{tail}")

    def number(self, pattern):
        match = re.search(pattern, self.stdout)
        if not match:
            raise RuntimeError(f"no match for {pattern!r} in:\n{self.stdout[-2000:]}")
        return float(match.group(1))


class Bench:
    def __init__(self, args, work):
        self.a = args
        self.work = work
        self.env = dict(os.environ, MX_NUM_THREADS=str(args.threads), OMP_NUM_THREADS=str(args.threads),
                        MKL_NUM_THREADS=str(args.threads))
        self.mx_train = os.path.join(args.build, "cmd", "mx-train")
        self.mx_predict = os.path.join(args.build, "cmd", "mx-predict")
        self.mx_export = os.path.join(args.build, "cmd", "mx-export")
        self.mx_quantize = os.path.join(args.build, "cmd", "mx-quantize")
        self.versions = {}
        self.notes = []
        self.count = 0

    def run(self, argv):
        self.count += 1
        work = os.path.join(self.work, f"run{self.count}")
        os.makedirs(work)
        return Child([str(a) for a in argv], self.env, work)

    # --- mx-train rows -------------------------------------------------------------------------
    def mx_train_rate(self, config, overrides):
        run_dir = os.path.join(self.work, "mx-train-run")
        child = self.run([self.mx_train, config, "train.epochs=1", *overrides, "--run-dir", run_dir])
        with open(os.path.join(run_dir, "metrics.jsonl")) as f:
            rate = float(re.search(r'"samples_per_sec":([0-9.eE+-]+)', f.read()).group(1))
        shutil.rmtree(run_dir)
        return rate, child.max_rss_mib

    def pytorch_rate(self, script, extra):
        child = self.run([self.a.python, os.path.join(BENCH, script), "--threads", self.a.threads, *extra])
        self.versions["PyTorch"] = re.search(r"pytorch (\S+)", child.stdout).group(1)
        return child.number(r"([0-9.]+) samples/s"), child.max_rss_mib

    def lenet_rows(self, act):
        config = os.path.join(ROOT, "configs", "lenet-fashion-mnist.yaml")
        if act == "relu":
            relu = os.path.join(ROOT, "configs", "lenet-relu-fashion-mnist.yaml")
            if os.path.exists(relu):
                config = relu
            else:  # the tanh config with ReLU, its data include made absolute
                text = open(config).read().replace("act_type: tanh", "act_type: relu")
                text = text.replace("include: fashion-mnist-data.yaml",
                                    "include: " + os.path.join(ROOT, "configs", "fashion-mnist-data.yaml"))
                config = os.path.join(self.work, "lenet-relu.yaml")
                with open(config, "w") as f:
                    f.write(text)
        overrides, extra = [], ["--epochs", 1, "--act", act]
        if self.a.quick:  # a twentieth of the epoch: 3000 images
            overrides.append("data.train.num_parts=20")
            extra += ["--batches", 3000 // 64]
        mx, peer = [], []
        for _ in range(self.a.repeats):
            mx.append(self.mx_train_rate(config, overrides))
            peer.append(self.pytorch_rate("lenet_pytorch.py", extra))
        return [Row(f"LeNet ({act}) train, batch 64", "samples/s", "PyTorch", mx, peer, higher_is_better=True)]

    def resnet18_rows(self):
        config = os.path.join(ROOT, "configs", "resnet18-cifar.yaml")
        batches = 5 if self.a.quick else 50
        mx, peer = [], []
        for _ in range(self.a.repeats):
            mx.append(self.mx_train_rate(config, [f"data.train.num_batches={batches}", "train.batch_size=32"]))
            peer.append(self.pytorch_rate("resnet18_cifar_pytorch.py", ["--batches", batches]))
        return [Row("ResNet-18 CIFAR train, batch 32 (synthetic data)", "samples/s", "PyTorch", mx, peer,
                    higher_is_better=True)]

    # --- ResNet-50 inference -------------------------------------------------------------------
    def resnet50_model(self):
        """The MXNet checkpoint prefix and the ONNX file, made once per run."""
        folder = os.path.join(self.work, "resnet50_v2")
        prefix = os.path.join(folder, "resnet50_v2-0000")
        onnx = os.path.join(folder, "resnet50_v2.onnx")
        if not os.path.exists(onnx):
            self.run([self.a.mxnet_python, os.path.join(BENCH, "infer_peer.py"), "export-resnet50", folder])
            self.run([self.mx_export, prefix, onnx, "--data-shape", "3,224,224"])
        return prefix, onnx

    def resnet50_rows(self, bfloat16=False):
        title = "ResNet-50 v2" + (" bf16" if bfloat16 else "")
        if not self.a.mxnet_python:
            print(f"{title}: skipped (no --mxnet-python to make the model)", file=sys.stderr)
            return []
        prefix, onnx = self.resnet50_model()
        runs, batch = (3 if self.a.quick else 20), 16
        mx_argv = [self.mx_predict, "-m", prefix, "--data-shape", "3,224,224", "--benchmark", runs,
                   "--batch-size", batch]
        if bfloat16:
            mx_argv += ["--precision", "bf16"]
            probe = subprocess.run([self.mx_predict, "-m", prefix, "--data-shape", "3,224,224", "--benchmark", "1",
                                    "--batch-size", "1", "--precision", "bf16"],
                                   capture_output=True, text=True, env=self.env)
            if probe.returncode == 2:
                print(f"{title}: skipped: {probe.stderr.strip()}", file=sys.stderr)
                return []
        peers = [("MXNet bf16" if bfloat16 else "MXNet", self.a.mxnet_python, prefix,
                  "mxnet-bf16" if bfloat16 else "mxnet"),
                 ("ONNX Runtime", self.a.python, onnx, "ort")]
        measured = {"mx": [], **{name: [] for name, *_ in peers}}
        for _ in range(self.a.repeats):
            measured["mx"].append(self.run(mx_argv))
            for name, python, model, mode in peers:
                child = self.run([python, os.path.join(BENCH, "infer_peer.py"), mode, model, "--batch", batch,
                                  "--runs", runs, "--threads", self.a.threads])
                self.versions[name] = child.stdout.splitlines()[0]
                measured[name].append(child)

        labelled = [(peer + (" (fp32)" if bfloat16 and peer == "ONNX Runtime" else ""), measured[peer])
                    for peer, *_ in peers]
        return inference_rows(title, batch, measured["mx"], labelled)


    # --- ResNet-50 int8 inference ---------------------------------------------------------------
    def resnet50_int8_rows(self):
        title = "ResNet-50 v1 int8"
        if not self.a.mxnet_python:
            print(f"{title}: skipped (no --mxnet-python to make the model)", file=sys.stderr)
            return []
        folder = os.path.join(self.work, "resnet50_v1")
        prefix, onnx = os.path.join(folder, "resnet50_v1-0000"), os.path.join(folder, "resnet50_v1.onnx")
        peer = os.path.join(BENCH, "int8_peer.py")
        self.run([self.a.mxnet_python, os.path.join(BENCH, "infer_peer.py"), "export-resnet50-v1", folder])
        self.run([self.mx_export, prefix, onnx, "--data-shape", "3,224,224"])
        calib, held_out = os.path.join(folder, "calib"), os.path.join(folder, "eval")
        self.run([self.a.python, peer, "images", calib, 64, 1])
        self.run([self.a.python, peer, "images", held_out, 64, 2])
        pre = ["--data-shape", "3,224,224", "--mean", "123.68,116.78,103.94", "--std", "58.4,57.12,57.38"]
        images = lambda d: sorted(os.path.join(d, f) for f in os.listdir(d))
        mx_int8, ort_int8 = os.path.join(folder, "int8"), os.path.join(folder, "resnet50_v1-int8.onnx")
        self.run([self.mx_quantize, prefix, mx_int8, "--calibration", *images(calib), *pre,
                  "--batch-size", 16, "--batches", 4])
        self.run([self.a.python, peer, "quantize-ort", onnx, ort_int8, "--images", calib])

        outputs = []
        for model in (prefix, mx_int8):
            child = self.run([self.mx_predict, "-m", model, *pre, *images(held_out), "--json", "--raw",
                              "--top-k", 1000])
            outputs.append(os.path.join(self.work, f"outputs{len(outputs)}.json"))
            with open(outputs[-1], "w") as f:
                f.write(child.stdout)
        agree = r"(top-1 agreement: .*)"
        mx_agree = self.run([self.a.python, peer, "agree-mx", *outputs])
        ort_agree = self.run([self.a.python, peer, "agree-ort", onnx, ort_int8, "--images", held_out])
        self.notes.append(f"{title} against float32 on 64 held-out images (random weights): mx "
                          f"{re.search(agree, mx_agree.stdout).group(1)}; ONNX Runtime "
                          f"{re.search(agree, ort_agree.stdout).group(1)}")

        runs, batch = (3 if self.a.quick else 20), 16
        mx_argv = lambda model: [self.mx_predict, "-m", model, "--data-shape", "3,224,224", "--benchmark", runs,
                                 "--batch-size", batch]
        measured = {"mx int8": [], "mx float32": [], "ONNX Runtime int8": []}
        for _ in range(self.a.repeats):
            measured["mx int8"].append(self.run(mx_argv(mx_int8)))
            measured["mx float32"].append(self.run(mx_argv(prefix)))
            child = self.run([self.a.python, os.path.join(BENCH, "infer_peer.py"), "ort", ort_int8, "--batch",
                              batch, "--runs", runs, "--threads", self.a.threads])
            self.versions["ONNX Runtime"] = child.stdout.splitlines()[0]
            measured["ONNX Runtime int8"].append(child)

        return inference_rows(title, batch, measured["mx int8"],
                              [(other, measured[other]) for other in ("mx float32", "ONNX Runtime int8")])


def inference_rows(title, batch, mx_runs, peers):
    """The batch-1 latency and batch-N throughput rows of mx's runs (mx-predict
    --benchmark output) against each (label, runs) of `peers`."""
    def figures(children, pattern):
        return [(c.number(pattern), c.max_rss_mib) for c in children]

    latency, throughput = r"latency at batch 1: ([0-9.]+) ms", r"throughput at batch \d+: ([0-9.]+) samples/s"
    rows = []
    for what, pattern, unit, higher in [("inference, batch 1 latency", latency, "ms", False),
                                        (f"inference, batch {batch} throughput", throughput, "samples/s", True)]:
        for label, runs in peers:
            rows.append(Row(f"{title} {what}", unit, label, figures(mx_runs, pattern), figures(runs, pattern),
                            higher_is_better=higher))
    return rows


class Row:
    def __init__(self, work, unit, peer, mx, peer_figures, higher_is_better):
        self.work, self.unit, self.peer = work, unit, peer
        self.mx, self.peer_figures, self.higher = mx, peer_figures, higher_is_better

    @staticmethod
    def spread(values):
        digits = 1 if statistics.median(values) >= 10 else 2
        return (f"{statistics.median(values):.{digits}f} "
                f"({min(values):.{digits}f}–{max(values):.{digits}f})")

    def markdown(self):
        mx = [v for v, _ in self.mx]
        peer = [v for v, _ in self.peer_figures]
        ratio = statistics.median(mx) / statistics.median(peer)
        if not self.higher:
            ratio = 1 / ratio
        rss = lambda rows: f"{statistics.median(r for _, r in rows):.0f}"
        return (f"| {self.work} | {self.unit} | {self.spread(mx)} | {self.peer} | {self.spread(peer)} | "
                f"{ratio:.2f}× | {rss(self.mx)} | {rss(self.peer_figures)} |")


def machine():
    model = "unknown CPU"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{model}, {os.cpu_count()} cores"


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--python", required=True, help="python with torch, onnxruntime and numpy")
    p.add_argument("--mxnet-python", help="python with mxnet 1.9.1 (the resnet50 rows)")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeats", type=int, default=None, help="alternating runs per row (default 5, --quick 2)")
    p.add_argument("--quick", action="store_true",
                   help="check the whole run end to end: a twentieth of a LeNet epoch, 5 ResNet-18 batches, "
                        "3 ResNet-50 runs, 2 repeats (figures not for quoting)")
    p.add_argument("--rows", default="lenet-tanh,lenet-relu,resnet18,resnet50,resnet50-bf16,resnet50-int8")
    a = p.parse_args()
    if a.repeats is None:
        a.repeats = 2 if a.quick else 5
    makers = {"lenet-tanh": lambda b: b.lenet_rows("tanh"), "lenet-relu": lambda b: b.lenet_rows("relu"),
              "resnet18": lambda b: b.resnet18_rows(), "resnet50": lambda b: b.resnet50_rows(),
              "resnet50-bf16": lambda b: b.resnet50_rows(bfloat16=True),
              "resnet50-int8": lambda b: b.resnet50_int8_rows()}
    wanted = a.rows.split(",")
    for name in wanted:
        if name not in makers:
            p.error(f"--rows: unknown row {name!r} (known: {', '.join(makers)})")

    load_before = os.getloadavg()
    rows, failed = [], []
    with tempfile.TemporaryDirectory(prefix="mx-bench-") as work:
        bench = Bench(a, work)
        for name in wanted:
            print(f"{name}...", file=sys.stderr, flush=True)
            try:
                rows += makers[name](bench)
            except RuntimeError as e:
                failed.append(name)
                print(f"{name} failed: {e}", file=sys.stderr)
    load_after = os.getloadavg()

    print(f"Machine: {machine()}; {a.threads} threads for every program; "
          f"{a.repeats} alternating runs per row{' (--quick)' if a.quick else ''}; "
          f"load average {load_before[0]:.1f} before, {load_after[0]:.1f} after.")
    print("Peers: " + ", ".join(f"{k} {v}" if k == "PyTorch" else v for k, v in sorted(bench.versions.items())))
    print("Figures: median (min–max) of the runs; ratio: mx's speed over the peer's (> 1: mx faster); "
          "peak RSS: median of the runs' ru_maxrss, MiB.")
    print()
    print("| work | unit | mx | peer | peer's figure | ratio | mx peak RSS | peer peak RSS |")
    print("| --- | --- | ---: | --- | ---: | ---: | ---: | ---: |")
    for row in rows:
        print(row.markdown())
    for note in bench.notes:
        print(f"\n{note}")
    if failed:
        print(f"\nfailed rows: {', '.join(failed)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
