#!/usr/bin/env bash
# Regenerates docs/operators.md from the operator registry (the single source).
# The cli test docs_operators_up_to_date fails when the committed file drifts.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${MX_BUILD_DIR:-$root/build}
"$build/cmd/mx-ops" --markdown > "$root/docs/operators.md.tmp"
mv "$root/docs/operators.md.tmp" "$root/docs/operators.md"
echo "wrote docs/operators.md"
