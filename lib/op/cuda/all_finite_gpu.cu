#include <algorithm>

#include "op/cuda/all_finite_gpu.h"
#include "op/cuda/device_value.cuh"
#include "op/cuda/elemwise_gpu.h"
#include "op/cuda/launch.cuh"
#include "op/tensor/all_finite_kernels.h"

namespace mx::op::cuda {
namespace {

constexpr int kArraysPerLaunch = 32;

// The arrays of one launch (a kernel argument holds a fixed number).
template <typename T>
struct ArrayChunk {
  const T* data[kArraysPerLaunch];
  int64_t size[kArraysPerLaunch];
  int count = 0;
};

// Block row y checks array y; its blocks stride over the array's elements.
// Every thread that finds a value not finite stores 0: the same value from
// any thread, in any order.
template <typename T>
__global__ void all_finite_kernel(ArrayChunk<T> chunk, float* flag) {
  const int a = blockIdx.y;
  const T* x = chunk.data[a];
  const int64_t n = chunk.size[a];
  const int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; i < n; i += stride)
    if (!kernels::finite_value(x[i])) *flag = 0.0f;
}

template <typename T>
void launch(const ArrayChunk<T>& chunk, int64_t longest, float* flag, cudaStream_t stream) {
  const dim3 grid(std::min<unsigned>(blocks_for(longest), 1024),
                  static_cast<unsigned>(chunk.count));
  all_finite_kernel<T><<<grid, kBlockThreads, 0, stream>>>(chunk, flag);
  check_launch("all_finite_kernel", "multi_all_finite");
}

}  // namespace

void all_finite_gpu(const RunContext& rctx, const std::vector<TensorRef>& inputs,
                    const TensorRef& flag, bool init_output) {
  float* out = flag.ptr<float>();
  const cudaStream_t stream = stream_of(rctx.stream);
  if (init_output) fill_gpu<float>("multi_all_finite", 1.0f, out, 1, OpReq::kWrite, rctx.stream);
  for (DType dtype : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    dispatch_device_real(dtype, "multi_all_finite", [&](auto zero) {
      using T = decltype(zero);
      ArrayChunk<T> chunk;
      int64_t longest = 0;
      for (const TensorRef& x : inputs) {
        if (x.dtype != dtype || x.size() == 0) continue;
        chunk.data[chunk.count] = static_cast<const T*>(x.data);
        chunk.size[chunk.count] = x.size();
        longest = std::max(longest, x.size());
        if (++chunk.count == kArraysPerLaunch) {
          launch(chunk, longest, out, stream);
          chunk.count = 0;
          longest = 0;
        }
      }
      if (chunk.count > 0) launch(chunk, longest, out, stream);
    });
  }
}

}  // namespace mx::op::cuda
