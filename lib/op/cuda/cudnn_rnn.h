// The RNN operator on cuDNN's RNN API (cudnnRNNForward,
// cudnnRNNBackwardData_v8, cudnnRNNBackwardWeights_v8), where it fits:
// float32 data, no projection, no cell clipping, no sequence lengths, and
// no dropout between layers (cuDNN would draw its own masks, not the seeded
// ones of rnn_gpu.cu). Everything else runs rnn_gpu.cu's own kernels.
//
// MXNet's flat parameter vector (rnn_param.h) is copied into cuDNN's weight
// space on every call, matrix by matrix where cuDNN puts them
// (cudnnGetRNNWeightParams), and the weight gradients are copied back; the
// copies are a few contiguous blocks per layer, small next to the steps.
// Every forward pass (inference too, as the operator's own kernels) keeps its
// output sequence and cuDNN's reserve space in the hidden 'workspace'
// output; each backward pass works on a copy of the reserve space, which
// cuDNN's backward calls overwrite, so that another backward pass may follow.
#pragma once

#include "op/nn/rnn_param.h"
#include "op/op_def.h"

namespace mx::op::cuda {

// Each runs the call on cuDNN and returns true, or returns false without
// touching anything where cuDNN does not fit the call (see above) or its
// reserve space does not fit the workspace output (both passes decide alike,
// from the parameters and shapes).
bool cudnn_rnn_forward(const RnnParam& p, const ForwardCall& c);
bool cudnn_rnn_backward(const RnnParam& p, const BackwardCall& c);

// Elements of the workspace output that leave room for cuDNN's saved values
// in training: the output sequence and an estimate of cuDNN's reserve space
// (only cuDNN knows it, at run time; where it asks for more, the call runs
// the operator's own kernels).
int64_t cudnn_rnn_workspace_bound(const RnnGeometry& g);

}  // namespace mx::op::cuda
