#include "op/cuda/launch.cuh"
#include "op/cuda/lrn_gpu.h"

namespace mx::op::cuda {
void lrn_forward_gpu(const LrnKernelGeom& g, DType dtype, const void* x, void* y, void* norm,
                     OpReq req, void* stream) {
  dispatch_float_or_double(dtype, "LRN", [&](auto zero) {
    using T = decltype(zero);
    launch_elements(
        g.size(), stream_of(stream), "LRN",
        LrnForward<T>{g, static_cast<const T*>(x), static_cast<T*>(y), static_cast<T*>(norm), req});
  });
}

void lrn_backward_gpu(const LrnKernelGeom& g, DType dtype, const void* x, const void* y,
                      const void* norm, const void* dy, void* dx, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  dispatch_float_or_double(dtype, "LRN", [&](auto zero) {
    using T = decltype(zero);
    launch_elements(g.size(), stream_of(stream), "LRN",
                    LrnBackward<T>{g, static_cast<const T*>(x), static_cast<const T*>(y),
                                   static_cast<const T*>(norm), static_cast<const T*>(dy),
                                   static_cast<T*>(dx), req});
  });
}

}  // namespace mx::op::cuda
