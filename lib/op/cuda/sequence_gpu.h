// Entry points of the GPU kernels of the sequence-model operators:
// LayerNorm (layer_norm_gpu.cu), the attention helpers (attention_gpu.cu)
// and SequenceMask/Last/Reverse (sequence_gpu.cu). Only project types
// appear here: the operators' .cc files build the functors of the
// *_kernels.h headers (the same ones the CPU tests run) and call these
// inside #if MX_USE_CUDA. `stream` is the operation's cudaStream_t.
#pragma once

#include <cstdint>

#include "op/nn/sequence_kernels.h"
#include "op/tensor_ref.h"

namespace mx::op {
template <typename T>
struct LayerNormForwardRow;
template <typename T>
struct LayerNormBackwardRow;
template <typename T>
struct LayerNormParamGrad;
}  // namespace mx::op

namespace mx::op::cuda {

// LayerNorm: one block per row (statistics and output; the data gradient),
// then the gamma and beta gradients by chunks of rows and per channel.
template <typename T>
void layer_norm_forward(const LayerNormForwardRow<T>& f, void* stream);
template <typename T>
void layer_norm_data_grad(const LayerNormBackwardRow<T>& f, void* stream);
template <typename T>
void layer_norm_param_grad(const LayerNormParamGrad<T>& f, void* stream);

// f(i) for every i in [0, n) (n <= 0: nothing is launched), for the
// element-wise functors of attention_kernels.h.
template <typename F>
void run_sequence_elements(int64_t n, void* stream, const char* where, const F& f);

// One SequenceMask/Last/Reverse pass: `in` is the data (forward) or the
// output gradient (backward), `out` the output or the data gradient.
struct SequenceCall {
  SequenceView view;
  TensorRef in, out;
  SequenceLengths lengths;
  float value = 0;  // SequenceMask's (0 for its gradient)
  OpReq req = OpReq::kWrite;
};

void sequence_mask_gpu(const SequenceCall& call, void* stream, const char* where);
void sequence_last_gpu(const SequenceCall& call, void* stream, const char* where);
void sequence_last_grad_gpu(const SequenceCall& call, void* stream, const char* where);
void sequence_reverse_gpu(const SequenceCall& call, void* stream, const char* where);

// Zero `width` elements at `offset` of each of `rows` rows of `pitch`
// elements of `t` (the slots of an interleaved gradient no product writes).
void zero_columns(const TensorRef& t, int64_t rows, int64_t pitch, int64_t offset, int64_t width,
                  void* stream, const char* where);

}  // namespace mx::op::cuda
