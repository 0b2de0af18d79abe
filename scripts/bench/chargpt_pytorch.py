#!/usr/bin/env python3
"""A character-level GPT with PyTorch on the CPU: the peer of the mx-train
config that scripts/bench/chargpt_vs_pytorch.py writes (the network of
configs/chargpt-fortunes.yaml): token and learned position embeddings
(96 characters, 64 positions, 128 wide), 4 pre-LayerNorm transformer layers
(causal multi-head self-attention with 4 heads, a feed-forward of 512 with
the exact (erf) GELU, residuals, dropout), a final LayerNorm and a Linear
128 -> 96, softmax cross entropy at every position; Adam.

The parameters start as mx-train's do with `initializer: {type: normal,
sigma: 0.02}`: every weight matrix and embedding N(0, 0.02), biases 0,
LayerNorm gains 1. --attention sdpa (the default) runs the attention with
torch.nn.functional.scaled_dot_product_attention (is_causal, PyTorch's
fused kernel, what nanoGPT uses); --attention manual with the products,
the mask and the softmax written out (minGPT).

Usage:
    python3 scripts/bench/chargpt_pytorch.py --data D.csv --label L.csv
        [--val-data VD.csv --val-label VL.csv] [--epochs 2] [--batch-size 32]
        [--threads N] [--dropout 0.1] [--lr 0.001] [--attention sdpa|manual] [--seed 0]
        [--device cpu|cuda]

D.csv and L.csv hold one window of token ids per row (the same files
mx-train reads, in the same order). Prints one line per epoch:
    epoch E: loss X tokens/s Y seconds S [val-loss V]
with X the mean cross entropy (nats per character) of the epoch's batches
and V that of the validation windows (dropout off), when given.
"""
import argparse
import math
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class SelfAttention(nn.Module):
    def __init__(self, units, heads, dropout, fused):
        super().__init__()
        self.heads, self.dropout, self.fused = heads, dropout, fused
        self.qkv = nn.Linear(units, 3 * units)
        self.proj = nn.Linear(units, units)
        self.attention_dropout = nn.Dropout(dropout)

    def forward(self, x):
        n, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (a.view(n, t, self.heads, c // self.heads).transpose(1, 2) for a in (q, k, v))
        if self.fused:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True,
                                               dropout_p=self.dropout if self.training else 0.0)
        else:
            scores = (q @ k.transpose(-2, -1)) / math.sqrt(k.shape[-1])
            future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
            weights = self.attention_dropout(F.softmax(scores.masked_fill(future, -1e4), dim=-1))
            y = weights @ v
        return self.proj(y.transpose(1, 2).reshape(n, t, c))


class TransformerLayer(nn.Module):
    def __init__(self, units, heads, dropout, fused):
        super().__init__()
        self.ln1 = nn.LayerNorm(units)
        self.attention = SelfAttention(units, heads, dropout, fused)
        self.ln2 = nn.LayerNorm(units)
        self.ffn1 = nn.Linear(units, 4 * units)
        self.ffn2 = nn.Linear(4 * units, units)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        x = x + self.dropout(self.attention(self.ln1(x)))
        return x + self.dropout(self.ffn2(F.gelu(self.ffn1(self.ln2(x)))))


class CharGPT(nn.Module):
    def __init__(self, vocab, context, units, heads, layers, dropout, fused):
        super().__init__()
        self.embed = nn.Embedding(vocab, units)
        self.position = nn.Embedding(context, units)
        self.dropout = nn.Dropout(dropout)
        self.layers = nn.Sequential(
            *[TransformerLayer(units, heads, dropout, fused) for _ in range(layers)])
        self.ln_final = nn.LayerNorm(units)
        self.fc = nn.Linear(units, vocab)

    def forward(self, x):
        positions = torch.arange(x.shape[1], device=x.device)
        y = self.layers(self.dropout(self.embed(x) + self.position(positions)))
        y = self.ln_final(y)
        return self.fc(y.reshape(-1, y.shape[-1]))


def init_as_mx(model):
    """mx-train's `initializer: {type: normal, sigma: 0.02}`."""
    for name, param in model.named_parameters():
        with torch.no_grad():
            if name.endswith("bias"):
                param.zero_()
            elif ".ln" in name or name.startswith("ln"):
                param.fill_(1.0)  # LayerNorm gains (their biases are above)
            else:
                nn.init.normal_(param, 0.0, 0.02)


def load(path):
    return torch.from_numpy(np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=2))


def mean_loss(model, data, label, batch_size):
    model.eval()
    total, batches = 0.0, data.shape[0] // batch_size
    with torch.no_grad():
        for b in range(batches):
            rows = slice(b * batch_size, (b + 1) * batch_size)
            total += F.cross_entropy(model(data[rows]), label[rows].reshape(-1)).item()
    model.train()
    return total / max(batches, 1)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--val-data")
    p.add_argument("--val-label")
    p.add_argument("--epochs", type=int, default=2)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--device", default="cpu", help="cpu or cuda")
    p.add_argument("--vocab", type=int, default=96)
    p.add_argument("--units", type=int, default=128)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--dropout", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=0.001)
    p.add_argument("--attention", choices=["sdpa", "manual"], default="sdpa")
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.threads > 0:
        torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    device = torch.device(a.device)
    # float32 as mx computes it on a GPU by default: no TF32.
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    data, label = load(a.data).to(device), load(a.label).to(device)
    val = (load(a.val_data).to(device), load(a.val_label).to(device)) if a.val_data else None
    model = CharGPT(a.vocab, data.shape[1], a.units, a.heads, a.layers, a.dropout,
                    a.attention == "sdpa")
    init_as_mx(model)
    model.to(device)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    batches = data.shape[0] // a.batch_size
    steps = data.shape[1]
    for epoch in range(a.epochs):
        total = 0.0
        start = time.perf_counter()
        for b in range(batches):
            rows = slice(b * a.batch_size, (b + 1) * a.batch_size)
            loss = F.cross_entropy(model(data[rows]), label[rows].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            total += loss.item()
        seconds = time.perf_counter() - start
        tokens = batches * a.batch_size * steps
        line = (f"epoch {epoch + 1}: loss {total / batches:.4f} tokens/s {tokens / seconds:.0f} "
                f"seconds {seconds:.2f}")
        if val is not None:
            line += f" val-loss {mean_loss(model, val[0], val[1], a.batch_size):.4f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
