#include "op/cuda/launch.cuh"
#include "op/cuda/quantize_linear_gpu.h"
#include "op/tensor/quantize_linear_kernels.h"

namespace mx::op::cuda {

void quantize_linear_forward_gpu(const RunContext& rctx, const TensorRef& x, const TensorRef& scale,
                                 const TensorRef& zero_point, const TensorRef& y, int64_t inner,
                                 int64_t channels) {
  auto run = [&](auto* q, float low, float high) {
    using Q = std::remove_pointer_t<decltype(q)>;
    const kernels::QuantizeLinearForward<Q> f{x.ptr<float>(),
                                              scale.ptr<float>(),
                                              zero_point.ptr<Q>(),
                                              y.ptr<Q>(),
                                              inner,
                                              channels,
                                              low,
                                              high};
    launch_elements(y.size(), stream_of(rctx.stream), "QuantizeLinear", f);
  };
  if (y.dtype == DType::kUint8)
    run(static_cast<uint8_t*>(nullptr), 0.0f, 255.0f);
  else
    run(static_cast<int8_t*>(nullptr), -128.0f, 127.0f);
}

}  // namespace mx::op::cuda
