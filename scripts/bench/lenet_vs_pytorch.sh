#!/usr/bin/env bash
# LeNet training throughput on Fashion-MNIST: mx-train and PyTorch in the
# same session, same machine, same batch size and optimizer.
#   scripts/bench/lenet_vs_pytorch.sh PYTHON_WITH_TORCH [epochs]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${1:?give a python that has torch installed}
epochs=${2:-1}
build=${MX_BUILD_DIR:-$root/build}
run_dir=$(mktemp -d)
trap 'rm -rf "$run_dir"' EXIT
"$build/cmd/mx-train" "$root/configs/lenet-fashion-mnist.yaml" "train.epochs=$epochs" --run-dir "$run_dir/mx" \
  2>/dev/null | grep "^epoch"
"$python" "$root/scripts/bench/lenet_pytorch.py" --epochs "$epochs"
