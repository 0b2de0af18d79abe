#!/usr/bin/env python3
"""What the int8 row of cpu_vs_peers.py needs besides timings.

    python int8_peer.py images DIR COUNT SEED
        COUNT synthetic 256x256 RGB images (binary PPM, which OpenCV and so
        mx-predict/mx-quantize read): smooth colour gradients with noise, a
        stand-in for photographs (no image set ships with the machine)
    python int8_peer.py quantize-ort FP32.onnx INT8.onnx --images DIR
        ONNX Runtime's own post-training quantizer (quantize_static, QDQ
        format, per-channel int8 weights, uint8 activations, MinMax
        calibration) on the images of DIR, preprocessed as mx-quantize is
        told to (center crop 224, ImageNet mean/std)
    python int8_peer.py agree-ort FP32.onnx INT8.onnx --images DIR
        the share of DIR's images whose top-1 class the int8 model gives as
        the float32 one does, and the int8 outputs' relative error
        ||int8 - fp32|| / ||fp32|| over all of them
    python int8_peer.py agree-mx FP32.json INT8.json
        the same from two `mx-predict --raw --top-k 1000 --json` outputs

The preprocessing: MEAN and STD below, the centre 224x224 of each image.
"""
import argparse
import glob
import json
import os
import sys

MEAN = (123.68, 116.78, 103.94)
STD = (58.4, 57.12, 57.38)


def write_images(directory, count, seed):
    import numpy as np

    rng = np.random.RandomState(seed)
    os.makedirs(directory, exist_ok=True)
    y, x = np.mgrid[0:256, 0:256] / 256.0
    for i in range(count):
        a, b, c = rng.rand(3)
        channels = []
        for ch in range(3):
            v = 128 + 100 * ((x - a) * (ch - 1) + (y - b) * (c - 0.5)) + rng.randint(-20, 21, (256, 256))
            channels.append(np.clip(v, 0, 255))
        pixels = np.stack(channels, axis=-1).astype(np.uint8)
        with open(os.path.join(directory, f"img{i:04d}.ppm"), "wb") as f:
            f.write(b"P6 256 256 255\n" + pixels.tobytes())


def read_ppm(path):
    import numpy as np

    data = open(path, "rb").read()
    head = data.split(b"\n", 1)
    magic, w, h, _ = head[0].split()
    assert magic == b"P6"
    w, h = int(w), int(h)
    pixels = np.frombuffer(head[1], dtype=np.uint8).reshape(h, w, 3).astype(np.float32)
    top, left = (h - 224) // 2, (w - 224) // 2
    crop = pixels[top:top + 224, left:left + 224]
    crop = (crop - np.array(MEAN, dtype=np.float32)) / np.array(STD, dtype=np.float32)
    return crop.transpose(2, 0, 1)[None]


def images(directory):
    return sorted(glob.glob(os.path.join(directory, "*.ppm")))


def quantize_ort(fp32, int8, directory):
    import onnx
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    name = onnx.load(fp32).graph.input[0].name

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.paths = iter(images(directory))

        def get_next(self):
            path = next(self.paths, None)
            return None if path is None else {name: read_ppm(path)}

    quantize_static(fp32, int8, Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)


def agreement(pairs):
    """Top-1 agreement and relative error of (float32, int8) output rows."""
    import numpy as np

    same = 0
    diff = ref = 0.0
    for want, got in pairs:
        same += int(np.argmax(want) == np.argmax(got))
        diff += float(np.sum((got - want) ** 2))
        ref += float(np.sum(want ** 2))
    return same, len(pairs), (diff / ref) ** 0.5


def agree_ort(fp32, int8, directory, threads=2):
    import onnxruntime as ort

    def session(path):
        o = ort.SessionOptions()
        o.intra_op_num_threads = threads
        return ort.InferenceSession(path, o, providers=["CPUExecutionProvider"])

    a, b = session(fp32), session(int8)
    name = a.get_inputs()[0].name
    pairs = []
    for path in images(directory):
        x = read_ppm(path)
        pairs.append((a.run(None, {name: x})[0][0], b.run(None, {name: x})[0][0]))
    return agreement(pairs)


def agree_mx(fp32_json, int8_json):
    import numpy as np

    def rows(path):
        out = {}
        for r in json.load(open(path))["predictions"]:
            v = np.zeros(len(r["top"]))
            for t in r["top"]:
                v[t["class"]] = t["score"]
            out[r["input"]] = v
        return out

    a, b = rows(fp32_json), rows(int8_json)
    return agreement([(a[k], b[k]) for k in sorted(a)])


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("mode", choices=["images", "quantize-ort", "agree-ort", "agree-mx"])
    p.add_argument("args", nargs="+")
    p.add_argument("--images")
    a = p.parse_args()
    if a.mode == "images":
        write_images(a.args[0], int(a.args[1]), int(a.args[2]))
    elif a.mode == "quantize-ort":
        quantize_ort(a.args[0], a.args[1], a.images)
    else:
        same, total, error = agree_ort(*a.args, a.images) if a.mode == "agree-ort" else agree_mx(*a.args)
        print(f"top-1 agreement: {same}/{total} = {100.0 * same / total:.1f}%; relative error {100 * error:.2f}%")


if __name__ == "__main__":
    sys.exit(main())
