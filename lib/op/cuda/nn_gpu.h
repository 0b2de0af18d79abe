// Entry points of the GPU kernels of the nn family's normalization,
// activation, softmax, output and dropout operators (activation_gpu.cu,
// batch_norm_gpu.cu, softmax_gpu.cu, dropout_gpu.cu). Only project types
// appear here: the operators' .cc files build the functors of the
// *_kernels.h headers (the same ones the CPU tests run) and call these
// inside #if MX_USE_CUDA. Each is explicitly instantiated in its .cu for
// the functors listed there; `stream` is the operation's cudaStream_t and
// `where` names the operator in errors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "op/tensor_ref.h"

namespace mx::op {
struct BatchNormView;
template <typename T, typename P>
struct BatchNormForwardChannel;
template <typename T, typename P>
struct BatchNormBackwardChannel;
template <typename T>
struct ValidLabelCount;
template <typename T>
struct PreluGammaGrad;
template <typename TI, typename TO>
struct SoftmaxRowForward;
template <typename TI, typename TO>
struct SoftmaxRowBackward;
}  // namespace mx::op

namespace mx::op::cuda {

// f(i) for every i in [0, n) (n <= 0: nothing is launched).
template <typename F>
void run_elements(int64_t n, void* stream, const char* where, const F& f);

// LeakyReLU prelu's gamma gradient: one block per output.
template <typename T>
void prelu_gamma_grad(const PreluGammaGrad<T>& f, void* stream);

// BatchNorm: each channel reduced in parts, one block each, then combined
// per channel (batch_norm_kernels.h); `workspace` holds
// batch_norm_workspace_bytes(view) bytes of GPU memory (the TempSpace).
size_t batch_norm_workspace_bytes(const BatchNormView& view);
// T: the data's type; P: the parameters' (float for float16 and bfloat16 data).
template <typename T, typename P>
void batch_norm_forward(const BatchNormForwardChannel<T, P>& f, void* workspace, void* stream);
template <typename T, typename P>
void batch_norm_backward(const BatchNormBackwardChannel<T, P>& f, void* workspace, void* stream);

// softmax, log_softmax and SoftmaxOutput row by row: a block per row where
// rows are contiguous and long enough to share (the last axis, 64 or more
// elements), else a thread per row (neighbouring threads then read
// neighbouring elements).
template <typename TI, typename TO>
void softmax_rows_forward(const SoftmaxRowForward<TI, TO>& f, void* stream, const char* where);
template <typename TI, typename TO>
void softmax_rows_backward(const SoftmaxRowBackward<TI, TO>& f, void* stream, const char* where);

// SoftmaxOutput with normalization 'valid': the number of labels that are
// not ignored, into *count (device memory), by one block.
template <typename T>
void count_valid_labels(const ValidLabelCount<T>& f, int64_t* count, void* stream);

// t = 0 on the GPU (the gradients of labels).
void fill_zero(const TensorRef& t, void* stream, const char* where);

}  // namespace mx::op::cuda
