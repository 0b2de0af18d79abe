#!/usr/bin/env python3
"""Training throughput of a character-level LSTM language model: mx-train
against PyTorch's nn.LSTM, in one run, on the same data and threads.

The model: Embedding (96 characters -> 64), 2 LSTM layers of 256 units
(--layers, --units), FullyConnected to 96, softmax cross entropy; sequences
of 64 characters, batch 32 (--batch), Adam with learning rate 0.002, the
LSTM's final states carried to the next batch (zeroed at each epoch). The
text (an English text file, Debian's fortunes by default) is cut into one
stream per row, so that row i of batch b continues row i of batch b - 1,
and written once as the CSV files both read in the same order.

Each round runs mx-train, then PyTorch (scripts/bench/charlstm_pytorch.py),
each a separate process with the same thread count, for EPOCHS epochs of
STEPS batches; the figures are those of the last epoch (the first one pays
for start-up: oneDNN's kernels are made, memory is first touched). Prints
per round and, over the rounds, the median (min-max) of the tokens/s of
both, their ratio, and the mean training loss (nats per character) of the
last epoch of each.

Usage:
  charlstm_vs_pytorch.py [--python PY] [--build DIR] [--text FILE] [--steps N]
                         [--epochs E] [--rounds R] [--threads T] [--mx-env K=V ...]
                         [--device cpu|gpu] [--units U] [--layers L] [--batch B]
                         [--precision float32|bfloat16|float16] [--seed S]
PY has torch and numpy (default: this python). DIR is mx's build folder
(default: $MX_BUILD_DIR, else build/). --mx-env sets variables for mx-train
only (e.g. MX_DNNL=0 for its reference kernels).
--device gpu trains both on the first GPU (mx-train's gpu:0, PyTorch's cuda).
--precision bfloat16 or float16: mixed precision on both sides (mx-train's
train.precision, PyTorch's torch.autocast with a GradScaler for float16).
--seed S seeds both sides' initial parameters (mx-train's train.seed,
PyTorch's torch.manual_seed; default 0), to see how far the losses move
with the draw alone.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
STEPS_PER_ROW, VOCAB = 64, 96
DEFAULT_TEXTS = ["/usr/share/games/fortunes", "/usr/share/common-licenses/GPL-3"]

CONFIG = """\
network:
  layers:
    - {{op: Embedding, name: embed, input_dim: {vocab}, output_dim: 64}}
    - {{op: RNN, name: lstm, mode: lstm, state_size: {units}, num_layers: {layers}, layout: NTC, begin_state: carry}}
    - {{op: Reshape, name: flat, shape: [-1, {units}]}}
    - {{op: FullyConnected, name: fc, num_hidden: {vocab}}}
    - {{op: SoftmaxOutput, name: softmax}}
data:
  train: {{type: CSVIter, data_csv: {data}, data_shape: [{steps}], label_csv: {label}, label_shape: [{steps}]}}
optimizer: {{type: adam, learning_rate: 0.002}}
train: {{epochs: {epochs}, batch_size: {batch}, metrics: [perplexity], log_interval: 50}}
"""


def read_text(path):
    """The text of a file, or of every plain file of a folder (fortunes)."""
    if os.path.isdir(path):
        parts = []
        for name in sorted(os.listdir(path)):
            full = os.path.join(path, name)
            if os.path.isfile(full) and not name.endswith(".dat") and not os.path.islink(full):
                with open(full, "rb") as f:
                    parts.append(f.read().decode("utf-8", "replace"))
        return "\n".join(parts)
    with open(path, "rb") as f:
        return f.read().decode("utf-8", "replace")


def token(ch):
    """96 tokens: newline 0, printable ASCII 1-95; anything else is a space."""
    if ch == "\n":
        return 0
    code = ord(ch)
    return code - 31 if 32 <= code <= 126 else 1


def write_csv(text, steps, batch, work):
    """STEPS batches of BATCH rows: stream i of the text is row i of each batch."""
    ids = [token(ch) for ch in text]
    per_stream = steps * STEPS_PER_ROW + 1
    need = batch * per_stream
    if len(ids) < need:
        ids = (ids * (need // max(len(ids), 1) + 1))[:need]  # a short text repeats
    streams = [ids[i * per_stream:(i + 1) * per_stream] for i in range(batch)]
    data, label = os.path.join(work, "data.csv"), os.path.join(work, "label.csv")
    with open(data, "w") as d, open(label, "w") as lab:
        for b in range(steps):
            for s in streams:
                window = s[b * STEPS_PER_ROW:(b + 1) * STEPS_PER_ROW + 1]
                d.write(",".join(map(str, window[:-1])) + "\n")
                lab.write(",".join(map(str, window[1:])) + "\n")
    return data, label


def run(argv, env):
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc.stdout


def run_mx(a, config, work, env, round_index):
    run_dir = os.path.join(work, f"mx-run-{round_index}")
    devices = ["train.devices=[gpu:0]"] if a.device == "gpu" else []
    run([os.path.join(a.build, "cmd", "mx-train"), config, *devices, f"train.precision={a.precision}",
         f"train.seed={a.seed}", "--run-dir", run_dir], env)
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        last = [json.loads(line) for line in f if line.strip()][-1]
    return last["samples_per_sec"] * STEPS_PER_ROW, math.log(last["train"]["perplexity"])


def run_torch(a, data, label, env):
    out = run([a.python, os.path.join(ROOT, "scripts", "bench", "charlstm_pytorch.py"), "--data",
               data, "--label", label, "--epochs", str(a.epochs), "--batch-size", str(a.batch),
               "--threads", str(a.threads), "--units", str(a.units), "--layers", str(a.layers),
               "--device", "cuda" if a.device == "gpu" else "cpu", "--precision", a.precision,
               "--seed", str(a.seed)], env)
    last = [line for line in out.splitlines() if line.startswith("epoch")][-1].split()
    return float(last[5]), float(last[3])


def summary(values):
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}-{max(values):,.0f})"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--build", default=os.environ.get("MX_BUILD_DIR", os.path.join(ROOT, "build")))
    p.add_argument("--text", default=next((t for t in DEFAULT_TEXTS if os.path.exists(t)), None))
    p.add_argument("--steps", type=int, default=150, help="batches per epoch")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--units", type=int, default=256, help="LSTM units per layer")
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--mx-env", action="append", default=[], metavar="K=V")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                   help="gpu: both train on the first GPU (mx gpu:0, PyTorch cuda)")
    p.add_argument("--precision", choices=["float32", "bfloat16", "float16"], default="float32",
                   help="mixed precision on both sides")
    p.add_argument("--seed", type=int, default=0, help="both sides' initial parameters")
    a = p.parse_args()
    if a.text is None:
        sys.exit("charlstm_vs_pytorch: no text file found; give one with --text")
    threads = str(a.threads)
    env = dict(os.environ, MX_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    mx_env = dict(env, **dict(kv.split("=", 1) for kv in a.mx_env))
    with tempfile.TemporaryDirectory() as work:
        data, label = write_csv(read_text(a.text), a.steps, a.batch, work)
        config = os.path.join(work, "charlstm.yaml")
        with open(config, "w") as f:
            f.write(CONFIG.format(vocab=VOCAB, data=data, label=label, steps=STEPS_PER_ROW,
                                  epochs=a.epochs, batch=a.batch, units=a.units, layers=a.layers))
        print(f"char-LSTM {a.layers}x{a.units} in {a.precision}, embedding 64, {STEPS_PER_ROW} steps, "
              f"batch {a.batch}, "
              f"{a.steps} batches per epoch, epoch {a.epochs} of {a.epochs} measured, "
              f"{a.threads} threads, text {a.text}", flush=True)
        mx_rates, torch_rates, mx_losses, torch_losses = [], [], [], []
        for r in range(a.rounds):
            mx_rate, mx_loss = run_mx(a, config, work, mx_env, r)
            torch_rate, torch_loss = run_torch(a, data, label, env)
            mx_rates.append(mx_rate)
            torch_rates.append(torch_rate)
            mx_losses.append(mx_loss)
            torch_losses.append(torch_loss)
            print(f"round {r + 1}: mx {mx_rate:,.0f} tokens/s (loss {mx_loss:.3f}), PyTorch "
                  f"{torch_rate:,.0f} tokens/s (loss {torch_loss:.3f}), ratio "
                  f"{mx_rate / torch_rate:.2f}", flush=True)
        ratio = statistics.median(mx_rates) / statistics.median(torch_rates)
        print(f"mx: {summary(mx_rates)} tokens/s, loss {statistics.median(mx_losses):.3f}")
        print(f"PyTorch: {summary(torch_rates)} tokens/s, loss {statistics.median(torch_losses):.3f}")
        print(f"mx / PyTorch: {ratio:.2f}")


if __name__ == "__main__":
    main()
