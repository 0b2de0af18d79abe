// The RNN operator's GPU kernels (rnn_gpu.cu): rnn_driver.h's algorithm with
// cuBLAS GEMMs on the operation's stream and our own kernels for the steps
// of rnn_kernels.h. Only project types appear here.
#pragma once

#include "op/nn/rnn_param.h"
#include "op/op_def.h"

namespace mx::op::cuda {

void rnn_forward_gpu(const RnnParam& p, const ForwardCall& c);
void rnn_backward_gpu(const RnnParam& p, const BackwardCall& c);

}  // namespace mx::op::cuda
