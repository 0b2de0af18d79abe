#!/usr/bin/env bash
# Sets everything up on a fresh Debian machine, builds mx and runs the whole
# test suite (unit, cli, sanitizer and fuzz tests; GPU tests skip without a GPU).
# Extra arguments go to ctest, e.g. scripts/test.sh -L unit
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh"
"$root/scripts/build.sh"
cd "${MX_BUILD_DIR:-$root/build}"
ctest --output-on-failure --timeout 900 "$@"
