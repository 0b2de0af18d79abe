#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/pooling_gpu.h"

namespace mx::op::cuda {
namespace {

// fn(I{}) with the narrowest index type that holds every index of both sides.
template <typename Fn>
void with_index_type(const PoolKernelGeom& g, Fn&& fn) {
  if (g.in_size() <= 0x7fffffffLL && g.out_size() <= 0x7fffffffLL) return fn(int32_t{});
  return fn(int64_t{});
}

}  // namespace

void pooling_forward_gpu(const PoolKernelGeom& g, DType dtype, const void* x, void* y, OpReq req,
                         void* stream) {
  if (req == OpReq::kNull) return;
  dispatch_device_real(dtype, "Pooling", [&](auto zero) {
    using T = decltype(zero);
    with_index_type(g, [&](auto index) {
      using I = decltype(index);
      launch_elements(g.out_size(), stream_of(stream), "Pooling",
                      PoolForward<T, I>{g, static_cast<const T*>(x), static_cast<T*>(y), req});
    });
  });
}

void pooling_backward_gpu(const PoolKernelGeom& g, DType dtype, const void* x, const void* y,
                          const void* dy, void* dx, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  dispatch_device_real(dtype, "Pooling", [&](auto zero) {
    using T = decltype(zero);
    with_index_type(g, [&](auto index) {
      using I = decltype(index);
      launch_elements(g.in_size(), stream_of(stream), "Pooling",
                      PoolBackward<T, I>{g, static_cast<const T*>(x), static_cast<const T*>(y),
                                         static_cast<const T*>(dy), static_cast<T*>(dx), req});
    });
  });
}

}  // namespace mx::op::cuda
