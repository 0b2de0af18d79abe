#!/usr/bin/env bash
# Sets everything up on a fresh Debian machine, builds mx and runs the main
# job: trains LeNet on Fashion-MNIST (Debian's dataset-fashion-mnist) and
# predicts the test set with the trained model.
#   scripts/run.sh [key=value ...]     e.g. scripts/run.sh train.epochs=2
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${MX_BUILD_DIR:-$root/build}
run_dir=${MX_RUN_DIR:-$root/runs/lenet-fashion-mnist}
"$build/cmd/mx-train" "$root/configs/lenet-fashion-mnist.yaml" --run-dir "$run_dir" "$@"
data=/usr/share/datasets/fashion-mnist
"$build/cmd/mx-predict" -m "$run_dir" "$data/t10k-images-idx3-ubyte.gz" --labels "$data/t10k-labels-idx1-ubyte.gz"
