#!/usr/bin/env bash
# Packs a CUDA build of mx for a GPU machine that has the NVIDIA driver and
# CUDA's libraries but none of mx's build dependencies (a rented or shared
# GPU box): the GPU test programs, mx-train and mx-predict, and every library
# they load that is not glibc, libstdc++ or CUDA's own (cudart, cuDNN,
# cuBLAS, NCCL come from the GPU machine), in one .tar.xz.
#   scripts/gpu-bundle.sh BUILD OUT.tar.xz
# Make BUILD small and for the target GPU, e.g. for Hopper (H100/H200):
#   MX_BUILD_DIR=build-gpu scripts/build.sh -DMX_USE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
#     -DMX_USE_DNNL=OFF -DMX_USE_ONNX=OFF -DMX_USE_CAIRO=OFF -DMX_USE_GRAPHVIZ=OFF \
#     -DMX_USE_IMAGE_CODECS=OFF -DMX_SANITIZER_TESTS=OFF
# (image codecs off: OpenCV's imgcodecs pulls in ~150 libraries; the GPU
# checks train on IDX data). On the GPU machine, from a checkout of the same
# commit: scripts/gpu-bundle-check.sh OUT.tar.xz LOGDIR [FASHION_MNIST_DIR].
set -euo pipefail
build=${1:?usage: gpu-bundle.sh BUILD OUT.tar.xz}
out=${2:?usage: gpu-bundle.sh BUILD OUT.tar.xz}
programs=(cmd/mx-train cmd/mx-predict tests/test_gpu tests/test_gpu_kernel_coverage tests/test_ops_gpu)
for p in "${programs[@]}"; do
  [ -x "$build/$p" ] || { echo "gpu-bundle: $build/$p not found: build it first" >&2; exit 1; }
done
ldd "$build/tests/test_ops_gpu" | grep libcudart >/dev/null ||
  { echo "gpu-bundle: $build is a build without CUDA (configure it with -DMX_USE_CUDA=ON)" >&2; exit 1; }
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/cmd" "$stage/build/tests" "$stage/lib"
for p in "${programs[@]}"; do
  cp "$build/$p" "$stage/build/$p"
  strip "$stage/build/$p"
done
# The libraries to carry: all that ldd resolves, less the C runtime (which
# the GPU machine has, at least as new) and CUDA's (which must match its driver).
ldd "${programs[@]/#/$build/}" | awk '/=> \//{print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|ld-linux-x86-64)\.so' |
  grep -vE '/lib(cudart|cudnn[a-z_]*|cublas|cublasLt|nccl)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done
git -C "$(dirname "$0")/.." rev-parse HEAD > "$stage/commit" 2>/dev/null || true
tar -C "$stage" -cf - build lib $( [ -f "$stage/commit" ] && echo commit ) | xz -T0 -6 > "$out"
echo "gpu-bundle: $out ($(du -h "$out" | cut -f1)): ${programs[*]} and $(ls "$stage/lib" | wc -l) libraries"
