// GPU kernels of the reductions (tensor/reduce.cc) and of the sums over
// broadcast axes (tensor/broadcast.cc); the decomposition is in
// tensor/reduce_kernels.h. Reductions take float and double, argmax every
// dtype.
#pragma once

#include <cstdint>

#include "op/tensor/reduce_kernels.h"

namespace mx::op::cuda {

enum class ReduceOp { kSum, kMax, kMin, kNorm1, kNorm2 };

// out (req) the reduction of `in` described by index; a sum is multiplied by
// scale (mean: 1 / count; a negated gradient: -1).
template <typename T>
void reduce_gpu(const char* op, ReduceOp kind, double scale, const ReduceIndex& index, const T* in,
                T* out, OpReq req, void* stream);
// dx[o] (req) g[s] * scale over the n input elements (SpreadGradKernel).
template <typename T>
void spread_grad_gpu(const char* op, const BroadcastIndex<1>& index, T scale, const T* g, T* dx,
                     int64_t n, OpReq req, void* stream);
// The gradient of max and min (ExtremumGradKernel).
template <typename T>
void extremum_grad_gpu(const char* op, const BroadcastIndex<1>& index, const T* g, const T* x,
                       const T* y, T* dx, int64_t n, OpReq req, void* stream);
// The gradient of norm of order `ord` (NormGradKernel).
template <typename T>
void norm_grad_gpu(const char* op, const BroadcastIndex<1>& index, int ord, const T* g, const T* x,
                   const T* y, T* dx, int64_t n, OpReq req, void* stream);
// argmax over the middle axis of `in` seen as (outer, size, inner), size > 0.
template <typename T>
void argmax_gpu(const char* op, const T* in, T* out, int64_t outer, int64_t size, int64_t inner,
                OpReq req, void* stream);

}  // namespace mx::op::cuda
