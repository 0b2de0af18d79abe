#!/usr/bin/env python3
"""Imperative training of an MLP on Fashion-MNIST with mx's Python package:
the network of configs/mlp-fashion-mnist.yaml (784-256-128-10, ReLU,
softmax) written as mx.nd operator calls, differentiated by mx.autograd and
trained with the config's optimizer (SGD, learning rate 0.1, momentum 0.9,
weight decay 1e-4 on the weights, gradients scaled by 1/batch, the rate
times 0.2 after 3000 and 4800 updates), Xavier initialization (gaussian,
fan-in, magnitude 2) and 10 epochs of batches of 100: the Python twin of
examples/cpp/train_mlp.cc, written as an MXNet 1.x script would be.

    python3 train_mlp.py [--data DIR] [--epochs N] [--max-batches N] [--seed N]

DIR holds the IDX files of Debian's dataset-fashion-mnist package (default
/usr/share/datasets/fashion-mnist). Prints each epoch's training and
validation accuracy; the last line is "validation accuracy X".
"""
import argparse
import sys
import time

import numpy as np

import mx

BATCH = 100


def mnist(data_dir, part, shuffle, seed):
    return mx.io.MNISTIter(image=f"{data_dir}/{part}-images-idx3-ubyte.gz",
                           label=f"{data_dir}/{part}-labels-idx1-ubyte.gz",
                           batch_size=BATCH, flat=True, shuffle=shuffle, seed=seed, silent=True)


class MLP:
    """Three fully connected layers; params: [w1, b1, w2, b2, w3, b3]."""

    def __init__(self, sizes=(784, 256, 128, 10)):
        init = mx.init.Xavier(rnd_type="gaussian", factor_type="in", magnitude=2)
        self.params = []
        for fan_in, fan_out in zip(sizes, sizes[1:]):
            w = mx.nd.empty((fan_out, fan_in))
            init("weight", w)
            self.params += [w, mx.nd.zeros((fan_out,))]
        for p in self.params:
            p.attach_grad()

    def __call__(self, x):
        h = x
        for layer in range(3):
            w, b = self.params[2 * layer], self.params[2 * layer + 1]
            h = mx.nd.FullyConnected(h, w, b, num_hidden=w.shape[0])
            if layer < 2:
                h = mx.nd.Activation(h, act_type="relu")
        return h


def correct(scores, label, count):
    predicted = mx.nd.argmax(scores, axis=1).asnumpy()[:count]
    return int((predicted == label.asnumpy()[:count]).sum())


def validate(net, val):
    val.reset()
    right = total = 0
    for batch in val:
        count = BATCH - batch.pad
        right += correct(net(batch.data[0]), batch.label[0], count)
        total += count
    return right / total


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", default="/usr/share/datasets/fashion-mnist")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--max-batches", type=int, default=-1, help="per epoch; -1: all")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    mx.random.seed(args.seed)
    np.random.seed(args.seed)
    net = MLP()
    optimizer = mx.optimizer.SGD(
        learning_rate=0.1, momentum=0.9, wd=1e-4, rescale_grad=1.0 / BATCH,
        lr_scheduler=mx.lr_scheduler.MultiFactorScheduler(step=[3000, 4800], factor=0.2))
    optimizer.set_wd_mult({i: 0.0 for i in range(1, len(net.params), 2)})  # no decay on biases
    updater = mx.optimizer.get_updater(optimizer)
    train = mnist(args.data, "train", True, args.seed)
    val = mnist(args.data, "t10k", False, 0)

    accuracy = 0.0
    for epoch in range(args.epochs):
        start = time.time()
        train.reset()
        right = total = 0
        for b, batch in enumerate(train):
            if 0 <= args.max_batches <= b:
                break
            x, label = batch.data[0], batch.label[0]
            with mx.autograd.record():
                out = mx.nd.SoftmaxOutput(net(x), label)
            out.backward()
            for i, p in enumerate(net.params):
                updater(i, p.grad, p)
            count = BATCH - batch.pad
            right += correct(out, label, count)
            total += count
        accuracy = validate(net, val)
        print(f"epoch {epoch + 1}: training accuracy {right / total:.4f}, "
              f"validation accuracy {accuracy:.4f} ({time.time() - start:.1f} s)", flush=True)
    print(f"validation accuracy {accuracy:.4f}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except mx.MXNetError as e:
        print(e, file=sys.stderr)
        sys.exit(1)
