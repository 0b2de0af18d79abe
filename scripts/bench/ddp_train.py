#!/usr/bin/env python3
"""LeNet or ResNet-18 (CIFAR shapes) under PyTorch DistributedDataParallel
(gloo, CPU): the peer of mx-train's dist_sync runs in
scripts/bench/dist_scaling.sh.

Usage (one process per rank, each started on its own host):
    python3 scripts/bench/ddp_train.py --rank R --world W --master ADDR:PORT
                                       [--model lenet|resnet18] [--batches 200]
                                       [--batch-size 64] [--threads 1]

The network, batch size per rank, optimizer and data (synthetic: random
images and labels, a different seed per rank, as mx-train's synthetic
iterator) match the mx side: LeNet (tanh; 1x28x28, batch 64, SGD 0.01
momentum 0.9; scripts/bench/lenet_synthetic_yaml.sh) or ResNet-18 for 32x32
images (3x32x32, batch 32, SGD 0.1 momentum 0.9 wd 5e-4;
configs/resnet18-cifar.yaml, the network of resnet18_cifar_pytorch.py).
--world 1 trains without a process group (the "alone" baseline). Gradients are averaged by DDP's
all-reduce (default buckets of 25 MB: LeNet's 1.7 MB travel as one bucket
after the backward pass, ResNet-18's 45 MB in two buckets, the first sent
while the backward pass goes on). Rank 0 prints one line:

    ddp world W: S seconds for B steps, X ms/step, Y samples/s per worker

timed from a barrier after start-up to the end of the last step (the
slowest rank's time), as mx-train times an epoch. gloo picks its interface
from GLOO_SOCKET_IFNAME (dist_scaling.sh sets the namespace hosts' one).
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lenet_pytorch import LeNet  # noqa: E402  the same networks as the single-process peers
from resnet18_cifar_pytorch import ResNet18  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--rank", type=int, default=0)
    p.add_argument("--world", type=int, default=1)
    p.add_argument("--master", default="127.0.0.1:29500", help="ADDR:PORT of rank 0")
    p.add_argument("--batches", type=int, default=200)
    p.add_argument("--model", choices=["lenet", "resnet18"], default="lenet")
    p.add_argument("--batch-size", type=int, default=0, help="default: 64 for LeNet, 32 for ResNet-18")
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)  # the same initial weights on every rank (DDP broadcasts rank 0's anyway)
    resnet = args.model == "resnet18"
    net = ResNet18() if resnet else LeNet(torch.tanh)
    if args.world > 1:
        dist.init_process_group("gloo", init_method="tcp://" + args.master, rank=args.rank,
                                world_size=args.world)
        model = torch.nn.parallel.DistributedDataParallel(net)
    else:
        model = net
    if resnet:
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=5e-4)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    g = torch.Generator().manual_seed(1 + args.rank)
    b = args.batch_size or (32 if resnet else 64)
    shape = (3, 32, 32) if resnet else (1, 28, 28)
    # A few distinct batches, reused: generating data is not what is timed.
    xs = [torch.rand(b, *shape, generator=g) for _ in range(8)]
    ys = [torch.randint(0, 10, (b,), generator=g) for _ in range(8)]
    if args.world > 1:
        dist.barrier()
    start = time.perf_counter()
    for i in range(args.batches):
        out = model(xs[i % 8])
        loss = F.cross_entropy(out, ys[i % 8])
        opt.zero_grad()
        loss.backward()
        opt.step()
    seconds = time.perf_counter() - start
    if args.world > 1:
        t = torch.tensor([seconds], dtype=torch.float64)
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        seconds = t.item()
        # Every rank done with the store before any tears it down: without
        # this barrier a rank sometimes aborted at exit ("terminate called
        # without an active exception") after the result was printed.
        dist.barrier()
        dist.destroy_process_group()
    if args.rank == 0:
        print("ddp world %d: %.3f seconds for %d steps, %.2f ms/step, %.1f samples/s per worker (torch %s, %d thread%s)"
              % (args.world, seconds, args.batches, seconds * 1000 / args.batches, b * args.batches / seconds,
                 torch.__version__, args.threads, "" if args.threads == 1 else "s"))


if __name__ == "__main__":
    main()
