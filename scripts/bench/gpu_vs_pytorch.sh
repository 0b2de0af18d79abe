#!/usr/bin/env bash
# mx against PyTorch on one GPU in float32: ResNet-50 (batch 64, 224x224) and
# ResNet-18 CIFAR training images/s, ResNet-50 inference latency (batch 1)
# and throughput (batch 64); prints a markdown table with the GPU's name
# (scripts/bench/gpu_vs_pytorch.py says what each row runs).
#   scripts/bench/gpu_vs_pytorch.sh PYTHON [--quick] [--repeats N] [--rows a,b]
# PYTHON has PyTorch with CUDA:
#   python3 -m venv ~/venvs/torch && ~/venvs/torch/bin/pip install torch
# Needs a CUDA build's build/cmd/mx-train and mx-predict (MX_BUILD_DIR: another build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${1:?give a python that has torch with CUDA installed}
shift
exec python3 "$root/scripts/bench/gpu_vs_pytorch.py" --python "$python" \
  --build "${MX_BUILD_DIR:-$root/build}" "$@"
