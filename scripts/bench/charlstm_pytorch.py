#!/usr/bin/env python3
"""A character-level LSTM language model with PyTorch (CPU or CUDA): the peer of
the mx-train config that scripts/bench/charlstm_vs_pytorch.py writes
(Embedding 96 -> 64, nn.LSTM 2 x 256, Linear 256 -> 96, softmax cross
entropy; Adam, learning rate 0.002; the LSTM's final states carried to the
next batch, detached, and zeroed at every epoch, as mx-train's
`begin_state: carry`). With --init mx (the default) the parameters start as
mx-train's do: every weight matrix Xavier-uniform (MXNet's magnitude 3,
average fan; the LSTM's per gate stack, as MXNet's FusedRNN initializer),
biases 0 but the LSTM's forget gate 1; --init torch keeps PyTorch's own
(an N(0, 1) embedding among them, which learns faster at first).

Usage:
    python3 scripts/bench/charlstm_pytorch.py --data D.csv --label L.csv
        [--epochs 2] [--batch-size 32] [--threads N] [--init mx|torch] [--device cpu|cuda]
        [--precision float32|bfloat16|float16] [--seed S]

--precision bfloat16 or float16 trains under torch.autocast (float16 with a
GradScaler, as mixed precision in float16 is meant to run), the peer of
mx-train's train.precision.

D.csv and L.csv hold one sequence of token ids per row (the same files
mx-train reads, in the same order). Prints one line per epoch:
    epoch E: loss X tokens/s Y seconds S
with X the mean cross entropy (nats per character) of the epoch's batches.
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class CharLSTM(nn.Module):
    def __init__(self, vocab, embed, units, layers):
        super().__init__()
        self.embed = nn.Embedding(vocab, embed)
        self.lstm = nn.LSTM(embed, units, num_layers=layers, batch_first=True)
        self.fc = nn.Linear(units, vocab)

    def forward(self, x, state):
        y, state = self.lstm(self.embed(x), state)
        return self.fc(y.reshape(-1, y.shape[-1])), state


def init_as_mx(model, units):
    """mx-train's default initialization (see the module's docstring)."""
    for name, param in model.named_parameters():
        with torch.no_grad():
            if "weight" in name:
                nn.init.xavier_uniform_(param)
            else:
                param.zero_()
                if name.startswith("lstm.bias_ih"):  # gates i, f, g, o: one forget bias of 1
                    param[units:2 * units] = 1.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--vocab", type=int, default=96)
    p.add_argument("--embed", type=int, default=64)
    p.add_argument("--units", type=int, default=256)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=0.002)
    p.add_argument("--init", choices=["mx", "torch"], default="mx")
    p.add_argument("--precision", choices=["float32", "bfloat16", "float16"], default="float32")
    p.add_argument("--seed", type=int, default=0, help="torch.manual_seed (initial parameters)")
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    # float32 as mx computes it on a GPU by default: no TF32 (cuDNN's RNNs use it unless told).
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    data = torch.from_numpy(np.loadtxt(a.data, delimiter=",", dtype=np.int64, ndmin=2))
    label = torch.from_numpy(np.loadtxt(a.label, delimiter=",", dtype=np.int64, ndmin=2))
    data, label = data.to(device), label.to(device)
    model = CharLSTM(a.vocab, a.embed, a.units, a.layers)
    if a.init == "mx":
        init_as_mx(model, a.units)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    low = a.precision != "float32"
    autocast_dtype = torch.bfloat16 if a.precision == "bfloat16" else torch.float16
    scaler = torch.amp.GradScaler(device.type, enabled=a.precision == "float16")
    batches = data.shape[0] // a.batch_size
    steps = data.shape[1]
    for epoch in range(a.epochs):
        state = None
        total = 0.0
        start = time.perf_counter()
        for b in range(batches):
            rows = slice(b * a.batch_size, (b + 1) * a.batch_size)
            with torch.autocast(device.type, dtype=autocast_dtype, enabled=low):
                logits, state = model(data[rows], state)
                loss = F.cross_entropy(logits, label[rows].reshape(-1))
            state = tuple(s.detach() for s in state)
            opt.zero_grad(set_to_none=True)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            total += loss.item()
        seconds = time.perf_counter() - start
        tokens = batches * a.batch_size * steps
        print(f"epoch {epoch + 1}: loss {total / batches:.4f} tokens/s {tokens / seconds:.0f} "
              f"seconds {seconds:.2f}", flush=True)


if __name__ == "__main__":
    main()
