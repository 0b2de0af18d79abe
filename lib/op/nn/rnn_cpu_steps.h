// The float32 steps of the RNN operator on the CPU, row by row with the
// vectorised math of op/vmath (the gates' sigmoids and tanhs are most of a
// step's time besides its GEMM). They compute what rnn_kernels.h's
// functors do, which the GPU kernels and the float64 CPU kernels run;
// MX_DNNL=0 (the reference kernels) runs the functors in float32 too, and
// the operator harness compares both.
#pragma once

#include <cstdint>

#include "op/nn/rnn_kernels.h"

namespace mx::op::rnn {

// Rows [begin, end) of a step: the same results as StepForward /
// StepBackward for those rows.
void forward_rows(const StepForward<float>& s, int64_t begin, int64_t end);
void backward_rows(const StepBackward<float>& s, int64_t begin, int64_t end);

}  // namespace mx::op::rnn
