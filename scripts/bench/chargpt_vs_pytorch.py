#!/usr/bin/env python3
"""Training throughput of a character-level GPT: mx-train against PyTorch
eager, in one run, on the same data and threads.

The model is the network of configs/chargpt-fortunes.yaml, read from that
file: 4 pre-LayerNorm transformer layers, 4 heads, 128 wide, a context of
64 characters, learned position embeddings, GELU feed-forward of 512,
dropout 0.1; batch 32, Adam with a constant learning rate of 0.001 on the
gradient of the mean loss per character, no clipping. The text (Debian's fortunes by default) is cut into windows of
64 characters (each with the next 64 as labels); the first STEPS * 32
windows of its first 95% train, VAL_BATCHES * 32 windows of the rest
validate. Both read the same CSV files in the same order (no shuffle).

Each round runs mx-train, then PyTorch (scripts/bench/chargpt_pytorch.py),
each a separate process with the same thread count, for EPOCHS epochs of
STEPS batches; the speed is that of the last epoch (the first one pays for
start-up), the validation loss (nats per character, dropout off) the one
after the last epoch. Prints per round and, over the rounds, the median
(min-max) of the tokens/s of both, the median of the rounds' ratios (each
round's two runs are back to back, so a change of the machine's load
touches both), and the median validation loss of each.

Usage:
  chargpt_vs_pytorch.py [--python PY] [--build DIR] [--text FILE] [--steps N]
                        [--epochs E] [--rounds R] [--threads T] [--val-batches V]
                        [--attention sdpa|manual] [--mx-env K=V ...] [--device cpu|gpu]
PY has torch and numpy (default: this python). DIR is mx's build folder
(default: $MX_BUILD_DIR, else build/). --attention is PyTorch's attention
(chargpt_pytorch.py). --mx-env sets variables for mx-train only.
--device gpu trains both on the first GPU (mx-train's gpu:0, PyTorch's cuda).
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
BATCH, CONTEXT, VOCAB = 32, 64, 96
DEFAULT_TEXTS = ["/usr/share/games/fortunes", "/usr/share/common-licenses/GPL-3"]

CONFIG = """\
{network}
data:
  train: {{type: CSVIter, data_csv: {data}, data_shape: [{steps}], label_csv: {label}, label_shape: [{steps}], shuffle: false}}
  val: {{type: CSVIter, data_csv: {val_data}, data_shape: [{steps}], label_csv: {val_label}, label_shape: [{steps}]}}
optimizer: {{type: adam, learning_rate: 0.001, rescale_grad: 1}}
initializer: {{type: normal, sigma: 0.02}}
train: {{epochs: {epochs}, batch_size: {batch}, metrics: [perplexity], log_interval: 50}}
"""


def network_section(path):
    """The `network:` section of a config, as its lines."""
    lines, inside = [], False
    with open(path) as f:
        for line in f:
            if line.startswith("network:"):
                inside = True
            elif inside and line.strip() and not line[0].isspace() and not line.startswith("#"):
                break
            if inside:
                lines.append(line.rstrip("\n"))
    return "\n".join(lines)


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


def write_windows(ids, count, data, label):
    """`count` windows of CONTEXT tokens from ids (repeated when short)."""
    need = count * CONTEXT + 1
    if len(ids) < need:
        ids = (ids * (need // max(len(ids), 1) + 1))[:need]
    with open(data, "w") as d, open(label, "w") as lab:
        for w in range(count):
            window = ids[w * CONTEXT:(w + 1) * CONTEXT + 1]
            d.write(",".join(map(str, window[:-1])) + "\n")
            lab.write(",".join(map(str, window[1:])) + "\n")


def run(argv, env):
    proc = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited with {proc.returncode}:\n{proc.stderr[-2000:]}")
    return proc.stdout


def run_mx(a, config, work, env, round_index):
    run_dir = os.path.join(work, f"mx-run-{round_index}")
    devices = ["train.devices=[gpu:0]"] if a.device == "gpu" else []
    run([os.path.join(a.build, "cmd", "mx-train"), config, *devices, "--run-dir", run_dir], env)
    with open(os.path.join(run_dir, "metrics.jsonl")) as f:
        last = [json.loads(line) for line in f if line.strip()][-1]
    return last["samples_per_sec"] * CONTEXT, math.log(last["val"]["perplexity"])


def run_torch(a, files, env):
    out = run([a.python, os.path.join(ROOT, "scripts", "bench", "chargpt_pytorch.py"), "--data",
               files["data"], "--label", files["label"], "--val-data", files["val_data"],
               "--val-label", files["val_label"], "--epochs", str(a.epochs), "--batch-size",
               str(BATCH), "--threads", str(a.threads), "--device",
               "cuda" if a.device == "gpu" else "cpu", "--attention", a.attention], env)
    last = [line for line in out.splitlines() if line.startswith("epoch")][-1].split()
    return float(last[5]), float(last[9])


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
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--val-batches", type=int, default=20)
    p.add_argument("--attention", choices=["sdpa", "manual"], default="sdpa")
    p.add_argument("--mx-env", action="append", default=[], metavar="K=V")
    p.add_argument("--device", choices=["cpu", "gpu"], default="cpu",
                   help="gpu: both train on the first GPU (mx gpu:0, PyTorch cuda)")
    a = p.parse_args()
    if a.text is None:
        sys.exit("chargpt_vs_pytorch: no text file found; give one with --text")
    threads = str(a.threads)
    env = dict(os.environ, MX_NUM_THREADS=threads, OMP_NUM_THREADS=threads, MKL_NUM_THREADS=threads)
    mx_env = dict(env, **dict(kv.split("=", 1) for kv in a.mx_env))
    with tempfile.TemporaryDirectory() as work:
        ids = [token(ch) for ch in read_text(a.text)]
        split = len(ids) * 95 // 100
        files = {k: os.path.join(work, k + ".csv")
                 for k in ("data", "label", "val_data", "val_label")}
        write_windows(ids[:split], a.steps * BATCH, files["data"], files["label"])
        write_windows(ids[split:], a.val_batches * BATCH, files["val_data"], files["val_label"])
        config = os.path.join(work, "chargpt.yaml")
        with open(config, "w") as f:
            f.write(CONFIG.format(
                network=network_section(os.path.join(ROOT, "configs", "chargpt-fortunes.yaml")),
                steps=CONTEXT, epochs=a.epochs, batch=BATCH, **files))
        print(f"char-GPT 4 layers x 4 heads, 128 wide, context {CONTEXT}, batch {BATCH}, "
              f"{a.steps} batches per epoch, epoch {a.epochs} of {a.epochs} measured, "
              f"validation on {a.val_batches * BATCH} windows, {a.threads} threads, "
              f"PyTorch attention {a.attention}, text {a.text}", flush=True)
        mx_rates, torch_rates, mx_losses, torch_losses = [], [], [], []
        for r in range(a.rounds):
            mx_rate, mx_loss = run_mx(a, config, work, mx_env, r)
            torch_rate, torch_loss = run_torch(a, files, env)
            mx_rates.append(mx_rate)
            torch_rates.append(torch_rate)
            mx_losses.append(mx_loss)
            torch_losses.append(torch_loss)
            print(f"round {r + 1}: mx {mx_rate:,.0f} tokens/s (val loss {mx_loss:.3f}), PyTorch "
                  f"{torch_rate:,.0f} tokens/s (val loss {torch_loss:.3f}), ratio "
                  f"{mx_rate / torch_rate:.2f}", flush=True)
        ratios = [m / t for m, t in zip(mx_rates, torch_rates)]
        print(f"mx: {summary(mx_rates)} tokens/s, val loss {statistics.median(mx_losses):.3f}")
        print(f"PyTorch: {summary(torch_rates)} tokens/s, val loss "
              f"{statistics.median(torch_losses):.3f}")
        print(f"mx / PyTorch: {statistics.median(ratios):.2f} (median of the rounds' ratios; "
              f"{min(ratios):.2f}-{max(ratios):.2f})")


if __name__ == "__main__":
    main()
