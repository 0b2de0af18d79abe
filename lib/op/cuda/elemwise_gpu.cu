// GPU kernels of the element-wise operators: each launches one functor of
// tensor/elemwise_kernels.h over the elements (the binary ones compiled per
// operation through with_binary, as on the CPU).
#include "op/cuda/device_value.cuh"
#include "op/cuda/elemwise_gpu.h"
#include "op/cuda/launch.cuh"

namespace mx::op::cuda {

template <typename T>
void binary_forward_gpu(const char* op, Binary kind, const T* a, const T* b, T* out, int64_t n,
                        OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  using D = DeviceType<T>;
  with_binary(kind, [&](auto k) {
    launch_elements(n, stream_of(stream), op,
                    BinaryForwardKernel<decltype(k)::value, D>{device_ptr(a), device_ptr(b),
                                                               device_ptr(out), req});
  });
}

template <typename T>
void binary_backward_gpu(const char* op, Binary kind, int side, const T* g, const T* a, const T* b,
                         T* grad, int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  using D = DeviceType<T>;
  with_binary(kind, [&](auto k) {
    launch_elements(n, stream_of(stream), op,
                    BinaryBackwardKernel<decltype(k)::value, D>{
                        device_ptr(g), device_ptr(a), device_ptr(b), device_ptr(grad), req, side});
  });
}

template <typename T>
void scalar_forward_gpu(const char* op, WithScalar kind, T s, const T* x, T* out, int64_t n,
                        OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op,
                  ScalarForwardKernel<DeviceType<T>>{kind, device_value(s), device_ptr(x),
                                                     device_ptr(out), req});
}

template <typename T>
void scalar_backward_gpu(const char* op, WithScalar kind, T s, const T* g, const T* x, const T* y,
                         T* grad, int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(
      n, stream_of(stream), op,
      ScalarBackwardKernel<DeviceType<T>>{kind, device_value(s), device_ptr(g), device_ptr(x),
                                          device_ptr(y), device_ptr(grad), req});
}

template <typename T>
void unary_forward_gpu(const char* op, Unary kind, const T* x, T* out, int64_t n, OpReq req,
                       void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op,
                  UnaryForwardKernel<DeviceType<T>>{kind, device_ptr(x), device_ptr(out), req});
}

template <typename T>
void unary_backward_gpu(const char* op, Unary kind, const T* g, const T* x, const T* y, T* grad,
                        int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op,
                  UnaryBackwardKernel<DeviceType<T>>{kind, device_ptr(g), device_ptr(x),
                                                     device_ptr(y), device_ptr(grad), req});
}

template <typename T>
void clip_forward_gpu(const char* op, T lo, T hi, const T* x, T* out, int64_t n, OpReq req,
                      void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op,
                  ClipForwardKernel<DeviceType<T>>{device_value(lo), device_value(hi),
                                                   device_ptr(x), device_ptr(out), req});
}

template <typename T>
void clip_backward_gpu(const char* op, T lo, T hi, const T* g, const T* x, T* grad, int64_t n,
                       OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(
      n, stream_of(stream), op,
      ClipBackwardKernel<DeviceType<T>>{device_value(lo), device_value(hi), device_ptr(g),
                                        device_ptr(x), device_ptr(grad), req});
}

template <typename T>
void fill_gpu(const char* op, T value, T* out, int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op,
                  FillKernel<DeviceType<T>>{device_value(value), device_ptr(out), req});
}

template <typename T>
void copy_gpu(const char* op, const T* x, T* out, int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op,
                  CopyKernel<DeviceType<T>>{device_ptr(x), device_ptr(out), req});
}

template <typename T>
void add_n_gpu(const char* op, const std::vector<const T*>& xs, T* out, int64_t n, OpReq req,
               void* stream) {
  // One launch per chunk of inputs, in order on the stream.
  for (const AddNKernel<T>& f : add_n_chunks(xs, out, req, op))
    launch_elements(n, stream_of(stream), op, on_device(f));
}

#define MX_ELEMWISE_GPU_INSTANTIATE(T)                                                             \
  template void binary_forward_gpu<T>(const char*, Binary, const T*, const T*, T*, int64_t, OpReq, \
                                      void*);                                                      \
  template void binary_backward_gpu<T>(const char*, Binary, int, const T*, const T*, const T*, T*, \
                                       int64_t, OpReq, void*);                                     \
  template void scalar_forward_gpu<T>(const char*, WithScalar, T, const T*, T*, int64_t, OpReq,    \
                                      void*);                                                      \
  template void scalar_backward_gpu<T>(const char*, WithScalar, T, const T*, const T*, const T*,   \
                                       T*, int64_t, OpReq, void*);                                 \
  template void unary_forward_gpu<T>(const char*, Unary, const T*, T*, int64_t, OpReq, void*);     \
  template void unary_backward_gpu<T>(const char*, Unary, const T*, const T*, const T*, T*,        \
                                      int64_t, OpReq, void*);                                      \
  template void clip_forward_gpu<T>(const char*, T, T, const T*, T*, int64_t, OpReq, void*);       \
  template void clip_backward_gpu<T>(const char*, T, T, const T*, const T*, T*, int64_t, OpReq,    \
                                     void*);                                                       \
  template void fill_gpu<T>(const char*, T, T*, int64_t, OpReq, void*);                            \
  template void copy_gpu<T>(const char*, const T*, T*, int64_t, OpReq, void*);                     \
  template void add_n_gpu<T>(const char*, const std::vector<const T*>&, T*, int64_t, OpReq, void*);

MX_ELEMWISE_GPU_INSTANTIATE(float)
MX_ELEMWISE_GPU_INSTANTIATE(double)
MX_ELEMWISE_GPU_INSTANTIATE(half_t)
MX_ELEMWISE_GPU_INSTANTIATE(bf16_t)

}  // namespace mx::op::cuda
