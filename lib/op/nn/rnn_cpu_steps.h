// The float32 steps of the RNN operator on the CPU, row by row with the
// vectorised math of op/vmath (the gates' sigmoids and tanhs are most of a
// step's time besides its GEMM). They compute what rnn_kernels.h's
// functors do, which the GPU kernels and the float64 CPU kernels run;
// MX_DNNL=0 (the reference kernels) runs the functors in float32 too, and
// the operator harness compares both.
#pragma once

#include <cstdint>
#include <random>

#include "op/nn/rnn_kernels.h"

namespace mx::op::rnn {

// Rows [begin, end) of a step: the same results as StepForward /
// StepBackward for those rows.
void forward_rows(const StepForward<float>& s, int64_t begin, int64_t end);
void backward_rows(const StepBackward<float>& s, int64_t begin, int64_t end);

// A dropout mask between layers: each element 1 / keep with probability
// keep, else 0, drawn in order from the operator's generator (the CPU
// kernels of rnn_driver.h and oneDNN's path draw the same masks).
template <typename T>
void draw_dropout_mask(std::mt19937_64& rng, T* mask, int64_t n, double keep) {
  const T scale = static_cast<T>(1.0 / keep);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int64_t i = 0; i < n; ++i) mask[i] = uniform(rng) < keep ? scale : T(0);
}

}  // namespace mx::op::rnn
