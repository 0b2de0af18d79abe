#!/usr/bin/env python3
"""Inference latency of the character-level LSTM language model at batch 1:
mx (mx-predict --benchmark) against PyTorch eager (nn.LSTM) and ONNX Runtime
(PyTorch's model exported by torch.onnx), in one run, on the same threads.

The model is that of configs/charlstm-fortunes.yaml: Embedding (96 -> 64),
2 LSTM layers of 256 units, FullyConnected 256 -> 96, softmax. Two inputs:
one token (a generation step) and a sequence of 64 tokens. mx's weights come
from a one-epoch mx-train run on a few batches of synthetic tokens (latency
does not depend on the values); PyTorch and ONNX Runtime use their own
random weights of the same shapes.

Each round runs mx-predict (a separate process: --benchmark RUNS at batch 1),
then PyTorch and ONNX Runtime in this script's child process, alternating;
each figure is the mean latency of RUNS forward passes after a warm-up, and
the table gives the median (min-max) over the rounds.

Usage:
  lstm_latency.py [--python PY] [--build DIR] [--runs N] [--rounds R] [--threads T]
PY has torch and onnxruntime (default: this python).
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VOCAB, STEPS, LENGTHS = 96, 64, [1, 64]

CONFIG = """\
network:
  layers:
    - {{op: Embedding, name: embed, input_dim: {vocab}, output_dim: 64}}
    - {{op: RNN, name: lstm, mode: lstm, state_size: 256, num_layers: 2, layout: NTC, begin_state: carry}}
    - {{op: Reshape, name: flat, shape: [-1, 256]}}
    - {{op: FullyConnected, name: fc, num_hidden: {vocab}}}
    - {{op: SoftmaxOutput, name: softmax}}
data:
  train: {{type: CSVIter, data_csv: {data}, data_shape: [{steps}], label_csv: {label}, label_shape: [{steps}]}}
optimizer: {{type: adam, learning_rate: 0.002}}
train: {{epochs: 1, batch_size: 4, log_interval: 1000}}
"""

PEER = r'''
import sys, time, os, tempfile
import torch, onnxruntime as ort
threads, runs = int(sys.argv[1]), int(sys.argv[2])
lengths = [int(v) for v in sys.argv[3].split(",")]
torch.set_num_threads(threads)
torch.manual_seed(0)

class CharLSTM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(96, 64)
        self.lstm = torch.nn.LSTM(64, 256, num_layers=2, batch_first=True)
        self.fc = torch.nn.Linear(256, 96)
    def forward(self, x):
        y, _ = self.lstm(self.embed(x))
        return torch.softmax(self.fc(y.reshape(-1, 256)), dim=-1)

model = CharLSTM().eval()
def mean_ms(fn):
    fn()
    start = time.perf_counter()
    for _ in range(runs):
        fn()
    return (time.perf_counter() - start) / runs * 1000

options = ort.SessionOptions()
options.intra_op_num_threads = threads
options.inter_op_num_threads = 1
with tempfile.TemporaryDirectory() as d:
    for t in lengths:
        x = torch.randint(0, 96, (1, t))
        with torch.no_grad():
            torch_ms = mean_ms(lambda: model(x))
        path = os.path.join(d, "m%d.onnx" % t)
        torch.onnx.export(model, (x,), path, input_names=["x"], output_names=["y"],
                          opset_version=14, dynamo=False)
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        feed = {"x": x.numpy()}
        ort_ms = mean_ms(lambda: session.run(None, feed))
        print("T=%d torch %.4f ort %.4f" % (t, torch_ms, ort_ms))
print("versions torch %s onnxruntime %s" % (torch.__version__, ort.__version__))
'''


def run(argv, env=None):
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        sys.exit(f"lstm_latency: {' '.join(argv)} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc.stdout


def make_checkpoint(a, work, env):
    """A one-epoch mx-train run of the model on synthetic tokens."""
    rows = 16
    for name in ("data", "label"):
        with open(os.path.join(work, name + ".csv"), "w") as f:
            for r in range(rows):
                f.write(",".join(str((r * 7 + i * 3) % VOCAB) for i in range(STEPS)) + "\n")
    config = os.path.join(work, "lstm.yaml")
    with open(config, "w") as f:
        f.write(CONFIG.format(vocab=VOCAB, steps=STEPS, data=os.path.join(work, "data.csv"),
                              label=os.path.join(work, "label.csv")))
    run_dir = os.path.join(work, "run")
    run([os.path.join(a.build, "cmd", "mx-train"), config, "--run-dir", run_dir], env)
    return run_dir


def mx_latency(a, run_dir, t, env):
    out = run([os.path.join(a.build, "cmd", "mx-predict"), "-m", run_dir, "--data-shape", str(t),
               "--batch-size", "1", "--benchmark", str(a.runs)], env)
    for line in out.splitlines():
        if line.startswith("latency at batch 1:"):
            return float(line.split(":")[1].split()[0])
    sys.exit("lstm_latency: no latency in mx-predict's output:\n" + out)


def spread(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}–{max(values):.3f})"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--build", default=os.environ.get("MX_BUILD_DIR", os.path.join(ROOT, "build")))
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    a = p.parse_args()
    env = dict(os.environ, MX_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads))
    figures = {(side, t): [] for side in ("mx", "torch", "ort") for t in LENGTHS}
    versions = ""
    with tempfile.TemporaryDirectory() as work:
        run_dir = make_checkpoint(a, work, env)
        for _ in range(a.rounds):
            for t in LENGTHS:
                figures[("mx", t)].append(mx_latency(a, run_dir, t, env))
            out = run([a.python, "-c", PEER, str(a.threads), str(a.runs),
                       ",".join(map(str, LENGTHS))], env)
            for line in out.splitlines():
                words = line.split()
                if words and words[0].startswith("T="):
                    t = int(words[0][2:])
                    figures[("torch", t)].append(float(words[2]))
                    figures[("ort", t)].append(float(words[4]))
                elif words and words[0] == "versions":
                    versions = " ".join(words[1:])
    print(f"char-LSTM inference latency at batch 1, ms (median (min–max) of {a.rounds} rounds of "
          f"{a.runs} runs; {a.threads} threads; {versions})\n")
    print("| input | mx | PyTorch | ONNX Runtime | mx vs PyTorch | mx vs ONNX Runtime |")
    print("| --- | --- | --- | --- | --- | --- |")
    for t in LENGTHS:
        mx_ms = statistics.median(figures[("mx", t)])
        torch_ms = statistics.median(figures[("torch", t)])
        ort_ms = statistics.median(figures[("ort", t)])
        name = "1 token" if t == 1 else f"{t} tokens"
        print(f"| {name} | {spread(figures[('mx', t)])} | {spread(figures[('torch', t)])} | "
              f"{spread(figures[('ort', t)])} | {torch_ms / mx_ms:.2f}× | {ort_ms / mx_ms:.2f}× |")


if __name__ == "__main__":
    main()
