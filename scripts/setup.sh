#!/usr/bin/env bash
# Installs what mx needs to build, test and run its default job on Debian,
# and the Python environment the Python package's tests use
# (scripts/python-env.sh). Idempotent: packages already present are left
# alone; apt-get update runs only when something is missing.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git python3 help2man dpkg-dev file
  libopenblas-dev libyaml-cpp-dev libcli11-dev doctest-dev nlohmann-json3-dev
  libopenmpi-dev openmpi-bin libopencv-dev zlib1g-dev
  clang libclang-rt-dev
  libonnx-dev libprotobuf-dev libonnx-testdata
  libdnnl-dev libcairo2-dev fonts-dejavu-core graphviz libgraphviz-dev
  dataset-fashion-mnist fortunes
  python3-venv python3-numpy python3-pytest python3-setuptools python3-wheel
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
else
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  echo "setup: installing ${missing[*]}"
  $sudo apt-get update
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi

root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/python-env.sh" "${MX_BUILD_DIR:-$root/build}/python-venv"
