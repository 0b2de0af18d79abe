// GPU kernels of the element-wise operators (tensor/elemwise.cc), for float
// and double; the per-element logic is in tensor/elemwise_kernels.h. Each
// runs on `stream` (a cudaStream_t) and names `op` in its errors; n == 0
// launches nothing.
#pragma once

#include <cstdint>
#include <vector>

#include "op/tensor/elemwise_kernels.h"

namespace mx::op::cuda {

template <typename T>
void binary_forward_gpu(const char* op, Binary kind, const T* a, const T* b, T* out, int64_t n,
                        OpReq req, void* stream);
// The gradient of input `side` (0: lhs, 1: rhs); a and b may be null for add/sub.
template <typename T>
void binary_backward_gpu(const char* op, Binary kind, int side, const T* g, const T* a, const T* b,
                         T* grad, int64_t n, OpReq req, void* stream);
template <typename T>
void scalar_forward_gpu(const char* op, WithScalar kind, T s, const T* x, T* out, int64_t n,
                        OpReq req, void* stream);
template <typename T>
void scalar_backward_gpu(const char* op, WithScalar kind, T s, const T* g, const T* x, const T* y,
                         T* grad, int64_t n, OpReq req, void* stream);
template <typename T>
void unary_forward_gpu(const char* op, Unary kind, const T* x, T* out, int64_t n, OpReq req,
                       void* stream);
template <typename T>
void unary_backward_gpu(const char* op, Unary kind, const T* g, const T* x, const T* y, T* grad,
                        int64_t n, OpReq req, void* stream);
template <typename T>
void clip_forward_gpu(const char* op, T lo, T hi, const T* x, T* out, int64_t n, OpReq req,
                      void* stream);
template <typename T>
void clip_backward_gpu(const char* op, T lo, T hi, const T* g, const T* x, T* grad, int64_t n,
                       OpReq req, void* stream);
template <typename T>
void fill_gpu(const char* op, T value, T* out, int64_t n, OpReq req, void* stream);
template <typename T>
void copy_gpu(const char* op, const T* x, T* out, int64_t n, OpReq req, void* stream);
template <typename T>
void add_n_gpu(const char* op, const std::vector<const T*>& xs, T* out, int64_t n, OpReq req,
               void* stream);

}  // namespace mx::op::cuda
