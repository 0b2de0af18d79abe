#!/usr/bin/env bash
# Makes the Python environment of mx's Python tests and examples: a venv at
# VENV (default build/python-venv) over Debian's python3 that sees Debian's
# numpy and pytest (--system-site-packages), with python/ (the `mx` package)
# installed into it from a copy, offline:
#   scripts/python-env.sh [VENV]
# scripts/setup.sh runs it; the python_install test runs it again so the
# tests use the package as it is now. The package finds libmx.so through
# MX_LIBRARY_PATH (the tests set it to the build's lib/).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
venv=${1:-${MX_BUILD_DIR:-$root/build}/python-venv}
# Debian's interpreter: the one python3-numpy and python3-pytest belong to.
python=${MX_PYTHON:-/usr/bin/python3}
if [ ! -x "$venv/bin/python" ]; then
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv --system-site-packages "$venv"
fi
# Built from a copy, so setuptools' build/ and egg-info stay out of the source tree.
src=$(mktemp -d "${TMPDIR:-/tmp}/mx-python.XXXXXX")
trap 'rm -rf "$src"' EXIT
cp -r "$root/python/." "$src/"
rm -rf "$src/build" "$src"/*.egg-info
PIP_DISABLE_PIP_VERSION_CHECK=1 "$venv/bin/python" -m pip install --quiet --no-deps \
  --no-build-isolation --no-index --force-reinstall "$src"
"$venv/bin/python" -c 'import numpy, pytest' 2>/dev/null ||
  { echo "python-env: numpy or pytest missing (scripts/setup.sh installs python3-numpy python3-pytest)" >&2; exit 1; }
echo "python-env: mx installed in $venv"
