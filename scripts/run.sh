#!/usr/bin/env bash
# Sets everything up on a fresh Debian machine, builds mx and runs its main job.
# Training on Fashion-MNIST arrives with mx-train; until then the main job shows
# what the built library does: it reads an MXNet 1.x checkpoint and measures
# the dependency engine.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
build=${MX_BUILD_DIR:-$root/build}
echo "== an MXNet 1.9.1 checkpoint, read by mx-params"
"$build/cmd/mx-params" "$root/tests/fixtures/params/checkpoint-0001.params"
echo "== dependency engine overhead"
"$build/bench/bench_engine" --ops 100000 --repeats 3
