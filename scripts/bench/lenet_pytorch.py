#!/usr/bin/env python3
"""LeNet on Fashion-MNIST with PyTorch on the CPU: the peer of
configs/lenet-fashion-mnist.yaml (same layers, batch size, optimizer and
initialization scheme), timed the same way mx-train times an epoch.

Usage:
    python3 scripts/bench/lenet_pytorch.py [--epochs 1] [--threads N] [--batches N] [--act relu]
                                           [--autocast]

Prints one line per epoch: samples/s, train and test accuracy. Run by
scripts/bench/lenet_vs_pytorch.sh and scripts/bench/cpu_vs_peers.py next to
mx-train in the same run. --act relu: the same net with ReLU in place of
tanh (the LeNet ReLU row of the CPU table). --autocast: mixed precision with
torch.autocast("cpu", dtype=torch.bfloat16), the peer of mx-train's
train.precision=bfloat16 (scripts/bench/amp_vs_pytorch.sh).
"""
import argparse
import gzip
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

DATA = "/usr/share/datasets/fashion-mnist/"


def idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    ndim = data[3]
    dims = [int.from_bytes(data[4 + 4 * i:8 + 4 * i], "big") for i in range(ndim)]
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


class LeNet(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.act = act
        self.conv1 = nn.Conv2d(1, 20, 5)
        self.conv2 = nn.Conv2d(20, 50, 5)
        self.fc1 = nn.Linear(50 * 4 * 4, 500)
        self.fc2 = nn.Linear(500, 10)
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.kaiming_normal_(m.weight, mode="fan_in")  # xavier gaussian, in, magnitude 2
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = F.max_pool2d(self.act(self.conv1(x)), 2)
        x = F.max_pool2d(self.act(self.conv2(x)), 2)
        x = self.act(self.fc1(x.flatten(1)))
        return self.fc2(x)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--batches", type=int, default=0, help="stop each epoch after N batches (0: all)")
    p.add_argument("--act", choices=["tanh", "relu"], default="tanh")
    p.add_argument("--autocast", action="store_true", help="bfloat16 mixed precision")
    args = p.parse_args()
    amp = lambda: torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast)
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    x = torch.from_numpy(idx(DATA + "train-images-idx3-ubyte.gz").astype(np.float32) / 256).unsqueeze(1)
    y = torch.from_numpy(idx(DATA + "train-labels-idx1-ubyte.gz").astype(np.int64))
    tx = torch.from_numpy(idx(DATA + "t10k-images-idx3-ubyte.gz").astype(np.float32) / 256).unsqueeze(1)
    ty = torch.from_numpy(idx(DATA + "t10k-labels-idx1-ubyte.gz").astype(np.int64))
    net = LeNet(torch.tanh if args.act == "tanh" else torch.relu)
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    b = args.batch_size
    for epoch in range(args.epochs):
        order = torch.randperm(len(x))
        net.train()
        start, seen, correct = time.time(), 0, 0
        for i in range(0, len(x) - b + 1, b):
            if args.batches and i // b >= args.batches:
                break
            idx_b = order[i:i + b]
            with amp():
                out = net(x[idx_b])
                loss = F.cross_entropy(out, y[idx_b])
            opt.zero_grad()
            loss.backward()
            opt.step()
            seen += b
            correct += (out.argmax(1) == y[idx_b]).sum().item()
        seconds = time.time() - start
        net.eval()
        with torch.no_grad(), amp():
            test = sum((net(tx[i:i + 1000]).argmax(1) == ty[i:i + 1000]).sum().item() for i in range(0, len(tx), 1000))
        print("pytorch %s%s threads %d epoch %d: %.1f samples/s, train-accuracy %.4f, test-accuracy %.4f" %
              (torch.__version__, " autocast-bf16" if args.autocast else "", torch.get_num_threads(), epoch + 1, seen / seconds, correct / seen, test / len(tx)))


if __name__ == "__main__":
    main()
