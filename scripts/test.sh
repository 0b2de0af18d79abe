#!/usr/bin/env bash
# Sets everything up on a fresh Debian machine, builds mx and runs the whole
# test suite (unit, cli, sanitizer and fuzz tests; GPU tests skip without a GPU).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
#
# scripts/test.sh --sanitize [ctest arguments] builds mx with AddressSanitizer
# and UndefinedBehaviorSanitizer in build-asan/ (MX_ASAN_BUILD_DIR) and runs
# the unit and cli suites there; any report fails the run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
if [ "${1:-}" = "--sanitize" ]; then
  shift
  build=${MX_ASAN_BUILD_DIR:-$root/build-asan}
  # CUDA is left out: ASan and the CUDA runtime's memory mappings do not mix.
  MX_BUILD_DIR=$build "$root/scripts/build.sh" -DMX_SANITIZE=address -DMX_USE_CUDA=OFF \
    -DMX_SANITIZER_TESTS=OFF -DMX_BUILD_BENCHMARKS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo
  cd "$build"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  ctest --output-on-failure --timeout 1800 -L "unit|cli" -LE "gpu|slow|mpi" "$@"
  exit
fi
"$root/scripts/build.sh"
cd "${MX_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 900 "$@"
