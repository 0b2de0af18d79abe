#!/usr/bin/env bash
# mx against PyTorch, MXNet 1.9.1 and ONNX Runtime on the CPU, each row of
# issue 11's table side by side in one run (scripts/bench/cpu_vs_peers.py
# says what each row runs); prints a markdown table.
#   scripts/bench/cpu_vs_peers.sh PYTHON [MXNET_PYTHON] [--quick] [more cpu_vs_peers.py options]
# PYTHON has the PyTorch and ONNX Runtime peers, MXNET_PYTHON MXNet 1.9.1
# (its own venv, as MXNet 1.9.1 needs numpy < 2):
#   python3 -m venv ~/venvs/peers && ~/venvs/peers/bin/pip install torch onnxruntime numpy
#   python3 -m venv ~/venvs/mxnet && ~/venvs/mxnet/bin/pip install mxnet==1.9.1 'numpy<2'
# Needs build/cmd/mx-train, mx-predict and mx-export (MX_BUILD_DIR: another build).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
python=${1:?give a python that has torch and onnxruntime installed}
shift
args=(--python "$python" --build "${MX_BUILD_DIR:-$root/build}")
if [ $# -gt 0 ] && [ "${1#-}" = "$1" ]; then
  args+=(--mxnet-python "$1")
  shift
fi
exec python3 "$root/scripts/bench/cpu_vs_peers.py" "${args[@]}" "$@"
