#!/usr/bin/env bash
# Mixed-precision training on the CPU, side by side in one run: mx-train's
# LeNet on Fashion-MNIST in float32 and in bfloat16 (train.precision), and
# PyTorch's in float32 and with torch.autocast("cpu", dtype=torch.bfloat16),
# on the same threads. Peak memory (max RSS) is printed for each.
#   scripts/bench/amp_vs_pytorch.sh PYTHON_WITH_TORCH [epochs] [threads]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${1:?give a python that has torch installed}
epochs=${2:-1}
threads=${3:-$(nproc)}
build=${MX_BUILD_DIR:-$root/build}
run_dir=$(mktemp -d)
trap 'rm -rf "$run_dir"' EXIT
export MX_NUM_THREADS=$threads OMP_NUM_THREADS=$threads
peak() { grep -o "Maximum resident set size (kbytes): [0-9]*" "$1" | awk '{printf "  peak RSS %.0f MiB\n", $NF / 1024}'; }
for precision in float32 bfloat16; do
  echo "mx-train $precision"
  /usr/bin/time -v "$build/cmd/mx-train" "$root/configs/lenet-fashion-mnist.yaml" "train.epochs=$epochs" \
    --precision "$precision" --run-dir "$run_dir/mx-$precision" 2>"$run_dir/time-$precision" |
    grep "^epoch" || true
  peak "$run_dir/time-$precision"
done
for flag in "" --autocast; do
  /usr/bin/time -v "$python" "$root/scripts/bench/lenet_pytorch.py" --epochs "$epochs" \
    --threads "$threads" $flag 2>"$run_dir/time-torch$flag"
  peak "$run_dir/time-torch$flag"
done
# ResNet-18 for 32x32 images on synthetic data (CIFAR-10 is not shipped):
# RESNET_BATCHES batches of 32 (default 12), after the same warm-up.
batches=${RESNET_BATCHES:-12}
for precision in float32 bfloat16; do
  echo "mx-train resnet18-cifar $precision"
  /usr/bin/time -v "$build/cmd/mx-train" "$root/configs/resnet18-cifar.yaml" "data.train.num_batches=$batches" \
    --precision "$precision" --run-dir "$run_dir/r-$precision" 2>"$run_dir/rtime-$precision" |
    grep "^epoch" || true
  peak "$run_dir/rtime-$precision"
done
for flag in "" --autocast; do
  /usr/bin/time -v "$python" "$root/scripts/bench/resnet18_cifar_pytorch.py" --batches "$batches" \
    --threads "$threads" $flag 2>"$run_dir/rtime-torch$flag"
  peak "$run_dir/rtime-torch$flag"
done
