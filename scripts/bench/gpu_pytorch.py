#!/usr/bin/env python3
"""PyTorch on the GPU in float32: the peer of the GPU benchmarks
(scripts/bench/gpu_vs_pytorch.py). The networks are those of mx's configs:
ResNet-50 v1 (configs/resnet50-synthetic.yaml: bottlenecks with the stride on
the 3x3 convolution, BatchNorm eps 2e-5) and the CIFAR ResNet-18
(configs/resnet18-cifar.yaml, BatchNorm eps 1e-3), trained with SGD
(momentum 0.9, weight decay as the configs) on synthetic data of the same
shape as mx-train's synthetic iterator (uniform random images, random
labels), made on the host and copied to the GPU every batch as mx does.
TF32 is off (mx's cuBLAS runs in the default math mode, cuDNN convolutions in
float32) unless --tf32 (mx's MX_GPU_TF32=1) turns it on for matrix products
and convolutions alike.

Usage:
    gpu_pytorch.py train-resnet50 [--batch 64] [--batches 20]
    gpu_pytorch.py train-resnet18 [--batch 128] [--batches 50]
    gpu_pytorch.py infer-resnet50 [--batch 64] [--runs 20]
    gpu_pytorch.py profile-resnet50 [--batch 64] [--batches 5]

train-*: one epoch of --batches batches to warm up (cuDNN's algorithm
search), then one timed epoch, timed as mx-train times an epoch; prints
"N samples/s". infer-resnet50: one warm-up run, then the mean of --runs runs
at batch 1 and at --batch, printed as mx-predict --benchmark prints them.
profile-resnet50: where PyTorch's ResNet-50 training step spends its GPU
time (torch.profiler over --batches steps after a warm-up): the kernels
summed into groups (convolution, BatchNorm, element-wise, ...) and the 25
costliest, per step; to set beside mx-train --benchmark's per-layer times.
The first line names PyTorch's version and the GPU.
"""
import argparse
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Bottleneck(nn.Module):
    def __init__(self, cin, filters, stride, project):
        super().__init__()
        mid = filters // 4
        bn = lambda c: nn.BatchNorm2d(c, eps=2e-5, momentum=0.1)
        self.conv1, self.bn1 = nn.Conv2d(cin, mid, 1, bias=False), bn(mid)
        self.conv2, self.bn2 = nn.Conv2d(mid, mid, 3, stride, 1, bias=False), bn(mid)
        self.conv3, self.bn3 = nn.Conv2d(mid, filters, 1, bias=False), bn(filters)
        self.sc = nn.Sequential(nn.Conv2d(cin, filters, 1, stride, bias=False), bn(filters)) if project else None

    def forward(self, x):
        y = F.relu(self.bn1(self.conv1(x)))
        y = F.relu(self.bn2(self.conv2(y)))
        y = self.bn3(self.conv3(y))
        return F.relu(y + (self.sc(x) if self.sc is not None else x))


class ResNet50(nn.Module):
    def __init__(self, classes=1000):
        super().__init__()
        layers = [nn.Conv2d(3, 64, 7, 2, 3, bias=False), nn.BatchNorm2d(64, eps=2e-5), nn.ReLU(),
                  nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for filters, repeat, stride in [(256, 3, 1), (512, 4, 2), (1024, 6, 2), (2048, 3, 2)]:
            for i in range(repeat):
                layers.append(Bottleneck(cin, filters, stride if i == 0 else 1, i == 0))
                cin = filters
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(2048, classes)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(x), 1).flatten(1))


class Basic(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        bn = lambda c: nn.BatchNorm2d(c, eps=1e-3, momentum=0.1)
        self.conv1, self.bn1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False), bn(cout)
        self.conv2, self.bn2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False), bn(cout)
        self.sc = None
        if stride != 1 or cin != cout:
            self.sc = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), bn(cout))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (self.sc(x) if self.sc is not None else x))


class ResNet18Cifar(nn.Module):
    def __init__(self):
        super().__init__()
        layers = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64, eps=1e-3), nn.ReLU()]
        cin = 64
        for filters, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
            layers += [Basic(cin, filters, stride), Basic(filters, filters, 1)]
            cin = filters
        self.body = nn.Sequential(*layers)
        self.fc = nn.Linear(512, 10)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(x), 1).flatten(1))


def device(tf32):
    if not torch.cuda.is_available():
        sys.exit("no GPU found: torch.cuda.is_available() is False (PyTorch " + torch.__version__ + ")")
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    torch.backends.cudnn.benchmark = True  # mx chooses cuDNN's algorithm once per shape too
    dev = torch.device("cuda:0")
    print(f"pytorch {torch.__version__} on {torch.cuda.get_device_name(dev)}")
    return dev


def train(model, shape, classes, batch, batches, wd, dev, amp=None):
    """amp: None (float32), "float16" or "bfloat16": torch.autocast's mixed
    precision (float32 weights), float16 with GradScaler's dynamic loss scale."""
    model = model.to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=wd)
    low = {"float16": torch.float16, "bfloat16": torch.bfloat16}.get(amp)
    scaler = torch.amp.GradScaler("cuda", enabled=low == torch.float16)
    # Host batches, as mx-train's synthetic iterator makes them, copied each step.
    data = [torch.rand(batch, *shape).pin_memory() for _ in range(2)]
    labels = [torch.randint(0, classes, (batch,)).pin_memory() for _ in range(2)]

    def epoch():
        start = time.perf_counter()
        for i in range(batches):
            x = data[i % 2].to(dev, non_blocking=True)
            y = labels[i % 2].to(dev, non_blocking=True)
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=low or torch.float32, enabled=low is not None):
                loss = F.cross_entropy(model(x), y)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
        torch.cuda.synchronize(dev)
        return time.perf_counter() - start

    epoch()  # warm-up epoch
    seconds = epoch()
    print(f"{batch * batches / seconds:.1f} samples/s")


KERNEL_GROUPS = [  # (group, any of these in the kernel's name), first match wins
    ("batchnorm", ("batch_norm", "bn_", "batchnorm")),
    ("convolution", ("conv", "xmma", "implicit", "wgrad", "dgrad", "fprop", "winograd", "fft", "cudnn")),
    ("matrix product", ("gemm", "cublas", "sgemm")),
    ("pooling", ("pool",)),
    ("optimizer", ("multi_tensor", "foreach", "sgd")),
    ("softmax/loss", ("softmax", "nll", "cross_entropy")),
    ("element-wise", ("elementwise", "vectorized", "unrolled", "reduce", "fill", "copy")),
]


def kernel_group(name):
    low = name.lower()
    for group, keys in KERNEL_GROUPS:
        if any(k in low for k in keys):
            return group
    return "other"


def profile(batch, batches, dev):
    from torch.profiler import ProfilerActivity, profile as torch_profile
    model = ResNet50().to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    x = torch.rand(batch, 3, 224, 224, device=dev)
    y = torch.randint(0, 1000, (batch,), device=dev)

    def step():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize(dev)
    start = time.perf_counter()
    with torch_profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(batches):
            step()
        torch.cuda.synchronize(dev)
    wall = (time.perf_counter() - start) / batches
    kernels = {}
    for e in prof.key_averages():
        us = getattr(e, "self_device_time_total", None) or getattr(e, "self_cuda_time_total", 0)
        if us > 0 and e.count > 0:
            kernels[e.key] = kernels.get(e.key, 0) + us / 1000 / batches
    groups = {}
    for name, ms in kernels.items():
        groups[kernel_group(name)] = groups.get(kernel_group(name), 0) + ms
    print(f"wall time per step (profiled): {wall * 1000:.2f} ms; GPU kernel time {sum(kernels.values()):.2f} ms")
    for group, ms in sorted(groups.items(), key=lambda g: -g[1]):
        print(f"  {group:16s} {ms:8.2f} ms")
    print("costliest kernels, ms per step:")
    for name, ms in sorted(kernels.items(), key=lambda k: -k[1])[:25]:
        print(f"  {ms:8.3f}  {name[:110]}")


def infer(batch, runs, dev):
    model = ResNet50().to(dev).eval()

    def seconds_per_batch(n):
        x = torch.full((n, 3, 224, 224), 0.5, device=dev)
        with torch.no_grad():
            model(x)
            torch.cuda.synchronize(dev)
            start = time.perf_counter()
            for _ in range(runs):
                model(x).cpu()  # the result on the host, as mx-predict waits for it
            return (time.perf_counter() - start) / runs

    one, many = seconds_per_batch(1), seconds_per_batch(batch)
    print(f"latency at batch 1: {one * 1000:.3f} ms")
    print(f"throughput at batch {batch}: {batch / many:.1f} samples/s")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("mode", choices=["train-resnet50", "train-resnet18", "infer-resnet50", "profile-resnet50"])
    p.add_argument("--batch", type=int)
    p.add_argument("--batches", type=int, default=20)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--tf32", action="store_true", help="let float32 use TF32 tensor cores")
    p.add_argument("--amp", choices=["float16", "bfloat16"],
                   help="train in mixed precision (torch.autocast; float16 with GradScaler)")
    a = p.parse_args()
    torch.manual_seed(0)
    dev = device(a.tf32)
    if a.mode == "train-resnet50":
        train(ResNet50(), (3, 224, 224), 1000, a.batch or 64, a.batches, 1e-4, dev, a.amp)
    elif a.mode == "train-resnet18":
        train(ResNet18Cifar(), (3, 32, 32), 10, a.batch or 128, a.batches, 5e-4, dev, a.amp)
    elif a.mode == "profile-resnet50":
        profile(a.batch or 64, min(a.batches, 10), dev)
    else:
        infer(a.batch or 64, a.runs, dev)


if __name__ == "__main__":
    main()
