#!/usr/bin/env bash
# mx-predict -m MODEL.onnx --benchmark next to ONNX Runtime on the same
# models, same thread count, alternating, in one run.
#   scripts/bench/onnx_vs_ort.sh PYTHON_WITH_ONNXRUNTIME [NAME=MODEL.onnx ...]
# Without models it exports two itself: the shipped LeNet
# (configs/lenet-fashion-mnist.yaml) and ResNet-18 CIFAR
# (configs/resnet18-cifar.yaml), each trained 2 batches on synthetic data by
# mx-train (the weights do not change the timing) and written by mx-export.
# PYTHON needs onnxruntime and numpy:
#   python3 -m venv ~/venvs/ort && ~/venvs/ort/bin/pip install onnxruntime numpy
# Settings (environment): THREADS (default 2), ROUNDS (5), RUNS (20),
# BATCH (32), MX_BUILD_DIR (default build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${1:?give a python that has onnxruntime installed}
shift
build=${MX_BUILD_DIR:-$root/build}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export_model() {  # NAME CONFIG DATA_SHAPE
  { grep -v '^include:' "$root/configs/$2"
    printf 'data:\n  train: {type: synthetic, data_shape: %s, num_classes: 10, num_batches: 2}\n' "$3"
  } >"$work/$1.yaml"
  "$build/cmd/mx-train" "$work/$1.yaml" train.batch_size=8 train.epochs=1 --run-dir "$work/$1" >/dev/null
  "$build/cmd/mx-export" "$work/$1" "$work/$1.onnx" >/dev/null
  echo "$1=$work/$1.onnx"
}

models=("$@")
if [ ${#models[@]} -eq 0 ]; then
  models=("$(export_model lenet lenet-fashion-mnist.yaml '[1, 28, 28]')"
          "$(export_model resnet18-cifar resnet18-cifar.yaml '[3, 32, 32]')")
fi
"$python" "$root/scripts/bench/onnx_vs_ort.py" --mx-predict "$build/cmd/mx-predict" \
  --threads "${THREADS:-2}" --rounds "${ROUNDS:-5}" --runs "${RUNS:-20}" --batch "${BATCH:-32}" \
  "${models[@]}"
