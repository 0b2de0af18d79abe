#pragma once
// Process-wide choices of how the GPU computes float32, from the runtime
// configuration (base/runtime_config.h):
// - MX_GPU_TF32=1: float32 matrix products (cuBLAS) and convolutions (cuDNN)
//   may run on TF32 tensor cores. Faster on Ampere and later GPUs, but with a
//   10-bit mantissa, so off by default: float32 results then compare with
//   the CPU's (the op harness's tolerances).
// - MX_GPU_DETERMINISTIC=1: cuDNN convolutions use deterministic algorithms
//   chosen by cuDNN's heuristic from the shapes alone (not by timing, which
//   may choose differently in each process), so two runs, or a run and its
//   resumption, compute the same numbers. Slower where the fastest algorithm
//   sums with atomics.
// - MX_CUDNN_BENCHMARK_LIMIT: how many of cuDNN's graph-API engine
//   configurations (heuristic order, then cuDNN's fallback list) are timed
//   for each convolution pass; more find faster engines, fewer start sooner.

namespace mx::op::cuda {

bool tf32_allowed();
bool deterministic_algorithms();
int cudnn_benchmark_limit();

}  // namespace mx::op::cuda
