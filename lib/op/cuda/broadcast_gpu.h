// GPU kernels of the broadcast_* operators (tensor/broadcast.cc), for float
// and double; the index arithmetic is in tensor/broadcast_kernels.h. The
// sums over broadcast axes of the gradients use reduce_gpu (reduce_gpu.h).
#pragma once

#include <cstdint>

#include "op/tensor/broadcast_kernels.h"

namespace mx::op::cuda {

// out[o] (req) a kind b for the n output elements; index: operands a and b.
template <typename T>
void broadcast_forward_gpu(const char* op, BroadcastKind kind, const BroadcastIndex<2>& index,
                           const T* a, const T* b, T* out, int64_t n, OpReq req, void* stream);
// dst[o] (req) g[o] * d(out)/d(input side), before the sum over broadcast axes.
template <typename T>
void broadcast_grad_gpu(const char* op, BroadcastKind kind, int side,
                        const BroadcastIndex<2>& index, const T* g, const T* a, const T* b, T* dst,
                        int64_t n, OpReq req, void* stream);

}  // namespace mx::op::cuda
