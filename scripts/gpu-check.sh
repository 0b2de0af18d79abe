#!/usr/bin/env bash
# One command for a person with a GPU: builds mx (Release, CUDA on) in
# build-gpu/ (MX_BUILD_DIR), runs the gpu label (every operator's GPU
# forward and gradient against the CPU's, the GPU kernel coverage, the GPU
# NDArray tests), then the GPU benchmarks against PyTorch, and prints a summary.
#   scripts/gpu-check.sh [PYTHON]
# PYTHON has PyTorch with CUDA (for the benchmarks; without it they are
# left out and the summary says so). CUDA 12+/13 with cuDNN 9, cuBLAS and
# NCCL under /usr/local/cuda; CMAKE_CUDA_ARCHITECTURES picks the GPUs
# (default 80;90: Ampere and Hopper; e.g. 89 for an L4 or RTX 40xx).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MX_BUILD_DIR:-$root/build-gpu}
python=${1:-}
log=$build/gpu-check
fail() { echo "gpu-check: $*" >&2; exit 1; }

command -v nvidia-smi >/dev/null 2>&1 || fail "nvidia-smi not found: this machine has no NVIDIA driver"
gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)
[ -n "$gpu" ] || fail "no GPU found (nvidia-smi lists none)"

arch=()
[ -n "${CMAKE_CUDA_ARCHITECTURES:-}" ] && arch=(-DCMAKE_CUDA_ARCHITECTURES="$CMAKE_CUDA_ARCHITECTURES")
echo "== build ($build, Release, CUDA on)"
MX_BUILD_DIR=$build "$root/scripts/build.sh" -DMX_USE_CUDA=ON -DMX_SANITIZER_TESTS=OFF "${arch[@]}" \
  || fail "the build failed"
mkdir -p "$log"

echo "== tests: ctest -L gpu"
(cd "$build" && ctest -L gpu --output-on-failure --timeout 1800) 2>&1 | tee "$log/tests.txt"
tests_status=${PIPESTATUS[0]}
# A skipped GPU test here means the GPU was not seen by mx's build.
skipped=$(grep -c "(Skipped)" "$log/tests.txt" || true)

bench_status=skipped
if [ -n "$python" ]; then
  echo "== benchmarks: scripts/bench/gpu_vs_pytorch.sh $python"
  if MX_BUILD_DIR=$build "$root/scripts/bench/gpu_vs_pytorch.sh" "$python" > "$log/benchmarks.md" \
      2> "$log/benchmarks.err"; then
    bench_status=ran
    cat "$log/benchmarks.md"
  else
    bench_status=failed
    cat "$log/benchmarks.err" >&2
  fi
fi

echo
echo "== summary"
echo "GPU: $gpu"
echo "tests (ctest -L gpu): $([ "$tests_status" = 0 ] && echo passed || echo FAILED)$(
  [ "$skipped" != 0 ] && echo ", $skipped skipped (mx saw no GPU)")"
grep -E "tests passed|tests failed" "$log/tests.txt" | tail -1
case $bench_status in
  ran) echo "benchmarks: $log/benchmarks.md (a new run for docs/benchmarks-log.md's GPU section; its figures go into docs/benchmarks/results.tsv)" ;;
  failed) echo "benchmarks: FAILED ($log/benchmarks.err)" ;;
  skipped) echo "benchmarks: not run (give a python with PyTorch+CUDA: scripts/gpu-check.sh PYTHON)" ;;
esac
[ "$tests_status" = 0 ] && [ "$skipped" = 0 ] && [ "$bench_status" != failed ]
