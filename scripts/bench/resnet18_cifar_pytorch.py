#!/usr/bin/env python3
"""ResNet-18 for 32x32 images with PyTorch on the CPU: the peer of
configs/resnet18-cifar.yaml (3x3 stem, four stages of two basic blocks with
1x1 projections, BatchNorm, global average pooling, SGD 0.1 momentum 0.9
wd 5e-4, batch 32), trained on synthetic data of the same shape as the
config's (3x32x32 uniform random images, 10 classes; CIFAR-10 is not
shipped), timed the way mx-train times an epoch: every batch of the epoch,
the first included.

Usage:
    python3 scripts/bench/resnet18_cifar_pytorch.py [--batches 50] [--threads N] [--batch-size 32]
                                                    [--autocast]

Prints one line: samples/s. Run by scripts/bench/cpu_vs_peers.py next to
mx-train in the same run. --autocast: bfloat16 mixed precision with
torch.autocast("cpu", dtype=torch.bfloat16) (scripts/bench/amp_vs_pytorch.sh).
"""
import argparse
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def bn(channels):
    return nn.BatchNorm2d(channels, eps=1e-3, momentum=0.1)  # MXNet's eps, its momentum 0.9


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.bn1 = bn(cout)
        self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.bn2 = bn(cout)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), bn(cout))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (self.sc(x) if self.sc is not None else x))


class ResNet18(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), bn(64), nn.ReLU()]
        cin = 64
        for filters, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            layers += [Basic(cin, filters, stride), Basic(filters, filters, 1)]
            cin = filters
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(512, 10)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_in")  # msraprelu

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(x), 1).flatten(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--batches", type=int, default=50)
    p.add_argument("--threads", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--autocast", action="store_true", help="bfloat16 mixed precision")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(1)
    b = args.batch_size
    data = [(torch.rand(b, 3, 32, 32), torch.randint(0, 10, (b,))) for _ in range(args.batches)]
    net = ResNet18()
    opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    net.train()
    start = time.time()
    for x, y in data:
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=args.autocast):
            loss = F.cross_entropy(net(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    seconds = time.time() - start
    print("pytorch %s%s threads %d: %.1f samples/s" %
          (torch.__version__, " autocast-bf16" if args.autocast else "", torch.get_num_threads(),
           args.batches * b / seconds))


if __name__ == "__main__":
    main()
