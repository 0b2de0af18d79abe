#!/usr/bin/env bash
# Configures and builds mx in build/ (Release). Extra arguments go to cmake,
# e.g. scripts/build.sh -DMX_USE_CUDA=OFF
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MX_BUILD_DIR:-$root/build}
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
elif [ $# -gt 0 ]; then
  cmake "$build" "$@"
fi
cmake --build "$build" --parallel "$(nproc)"
