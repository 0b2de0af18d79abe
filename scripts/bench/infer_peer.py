#!/usr/bin/env python3
"""Inference peers of mx-predict --benchmark, one process per measurement.

    python infer_peer.py export-resnet50 DIR          # needs mxnet 1.9.1
    python infer_peer.py export-resnet50-v1 DIR       # the same, resnet50_v1
    python infer_peer.py mxnet PREFIX-0000 [options]  # needs mxnet 1.9.1
    python infer_peer.py mxnet-bf16 PREFIX-0000 [...] # the same in bfloat16 (AMP)
    python infer_peer.py ort MODEL.onnx [options]     # needs onnxruntime

export-resnet50 writes MXNet Gluon's model_zoo resnet50_v2 (random weights,
Xavier; the weights do not change the timing) as DIR/resnet50_v2-symbol.json
and DIR/resnet50_v2-0000.params, the MXNet 1.x checkpoint that mx-predict
reads and mx-export turns into ONNX. export-resnet50-v1 writes resnet50_v1
(DIR/resnet50_v1-*): its BatchNorms and ReLUs follow the convolutions, the
shape int8 inference fuses (the int8 row).

mxnet and ort measure as mx-predict --benchmark does: an input of shape
(batch, 3, 224, 224) filled with 0.5, one warm-up run, then the mean of RUNS
runs, at batch 1 (latency) and at --batch (throughput). They print the same
two lines as mx-predict. Options: --batch 16, --runs 20, --threads 2.
Run by scripts/bench/cpu_vs_peers.py.
"""
import argparse
import os
import time
import warnings


def export_resnet50(directory, arch="v2"):
    import mxnet as mx
    from mxnet.gluon.model_zoo import vision

    mx.random.seed(1)
    net = (vision.resnet50_v1 if arch == "v1" else vision.resnet50_v2)(pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.zeros((1, 3, 224, 224))).wait_to_read()
    os.makedirs(directory, exist_ok=True)
    net.export(os.path.join(directory, f"resnet50_{arch}"), epoch=0)


def mxnet_runner(prefix):
    import mxnet as mx

    base, epoch = prefix.rsplit("-", 1)
    with warnings.catch_warnings():  # "cannot decide type for data": float32, as given below
        warnings.simplefilter("ignore")
        net = mx.gluon.SymbolBlock.imports(f"{base}-symbol.json", ["data"], f"{base}-{epoch}.params")
    net.hybridize(static_alloc=True, static_shape=True)
    version = f"MXNet {mx.__version__} (oneDNN {'on' if mx.runtime.Features().is_enabled('MKLDNN') else 'off'})"

    def run(batch):
        x = mx.nd.full((batch, 3, 224, 224), 0.5)
        return lambda: net(x).wait_to_read()

    return version, run


def mxnet_bf16_runner(prefix):
    """MXNet's automatic mixed precision in bfloat16 (its oneDNN layers), on
    the symbolic executor: MXNet's faster bfloat16 route here (Gluon's
    convert_hybrid_block ran 30% slower)."""
    import mxnet as mx
    from mxnet.contrib import amp

    base, epoch = prefix.rsplit("-", 1)
    sym, args, aux = mx.model.load_checkpoint(base, int(epoch))
    sym, args, aux = amp.convert_model(sym, args, aux, target_dtype="bfloat16", cast_optional_params=True)
    version = f"MXNet {mx.__version__} bfloat16 AMP"

    def run(batch):
        exe = sym.simple_bind(mx.cpu(), data=(batch, 3, 224, 224), grad_req="null")
        exe.copy_params_from(args, aux, allow_extra_params=True)
        exe.arg_dict["data"][:] = 0.5
        return lambda: exe.forward(is_train=False)[0].wait_to_read()

    return version, run


def ort_runner(model, threads):
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
    info = session.get_inputs()[0]
    example = [int(d) for d in info.shape[1:]]

    def run(batch):
        feed = {info.name: np.full([batch] + example, 0.5, dtype=np.float32)}
        return lambda: session.run(None, feed)

    return f"ONNX Runtime {ort.__version__}", run


def seconds_per_batch(step, runs):
    step()  # warm up
    start = time.perf_counter()
    for _ in range(runs):
        step()
    return (time.perf_counter() - start) / runs


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["export-resnet50", "export-resnet50-v1", "mxnet", "mxnet-bf16", "ort"])
    p.add_argument("model", help="output folder, MXNet PREFIX-NNNN or ONNX file")
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    a = p.parse_args()
    if a.mode.startswith("export-resnet50"):
        export_resnet50(a.model, "v1" if a.mode.endswith("v1") else "v2")
        return
    runners = {"mxnet": mxnet_runner, "mxnet-bf16": mxnet_bf16_runner,
               "ort": lambda model: ort_runner(model, a.threads)}
    version, run = runners[a.mode](a.model)
    one = seconds_per_batch(run(1), a.runs)
    many = seconds_per_batch(run(a.batch), a.runs)
    print(version)
    print(f"latency at batch 1: {one * 1000:.3f} ms")
    print(f"throughput at batch {a.batch}: {a.batch / many:.1f} samples/s "
          f"({many * 1000:.3f} ms per batch, mean of {a.runs} runs)")


if __name__ == "__main__":
    main()
