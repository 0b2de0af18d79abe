#include <algorithm>

#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/ordering_gpu.h"
#include "op/infer_util.h"
#include "op/tensor/ordering_kernels.h"

namespace mx::op::cuda {
namespace {

constexpr int kTopKThreads = 256;

// One block per row (grid-stride over the rows); blockDim.x is a power of
// two and the dynamic shared memory holds one pick per thread.
template <typename T, typename I>
__global__ void topk_kernel(int64_t rows, kernels::TopKRows<T, I> f) {
  extern __shared__ __align__(16) unsigned char shared[];
  auto* picks = reinterpret_cast<kernels::TopKPick<T>*>(shared);
  const int t = static_cast<int>(threadIdx.x);
  const int threads = static_cast<int>(blockDim.x);
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    kernels::TopKPick<T> prev{f.data[0], -1};
    for (int64_t r = 0; r < f.k; ++r) {
      picks[t] = f.next(row, t, threads, prev);
      __syncthreads();
      for (int stride = threads / 2; stride > 0; stride /= 2) {
        if (t < stride) picks[t] = f.first(picks[t], picks[t + stride]);
        __syncthreads();
      }
      prev = picks[0];
      if (t == 0) f.write(row, r, prev);
      __syncthreads();  // picks[0] is read before the next round overwrites it
    }
  }
}

template <typename C>
DeviceType<C>* data_or_null(const TensorRef& t) {
  return t.data == nullptr ? nullptr : device_ptr<C>(t);
}

}  // namespace

void topk_gpu(const RunContext& rctx, const TensorRef& data, const kernels::TopKGeometry& g,
              bool ascend, const TopKTargets& targets) {
  if (g.rows() == 0 || g.k == 0) return;
  const cudaStream_t stream = stream_of(rctx.stream);
  if (targets.mask.data != nullptr && targets.mask_req != OpReq::kAdd &&
      targets.mask_req != OpReq::kNull)
    MX_CUDA_CHECK(
        cudaMemsetAsync(targets.mask.data, 0,
                        static_cast<size_t>(targets.mask.size()) * dtype_size(targets.mask.dtype),
                        stream),
        "topk");
  // The indices' dtype (the data's when the mode writes none).
  const DType index_dtype = targets.indices.data != nullptr ? targets.indices.dtype : data.dtype;
  dispatch_dtype(data.dtype, [&](auto tag) {
    using C = typename decltype(tag)::type;
    using T = DeviceType<C>;
    dispatch_dtype(index_dtype, [&](auto itag) {
      using IC = typename decltype(itag)::type;
      using I = DeviceType<IC>;
      kernels::TopKOutputs<T, I> out;
      out.values = data_or_null<C>(targets.values);
      out.indices = data_or_null<IC>(targets.indices);
      out.mask = data_or_null<C>(targets.mask);
      out.values_req = targets.values_req;
      out.indices_req = targets.indices_req;
      out.mask_req = targets.mask_req;
      const kernels::TopKRows<T, I> f{device_ptr<C>(data), g.n, g.inner, g.k, ascend, out};
      const auto blocks = static_cast<unsigned>(std::min<int64_t>(g.rows(), kMaxBlocks));
      const size_t shared_bytes = sizeof(kernels::TopKPick<T>) * kTopKThreads;
      topk_kernel<T, I><<<blocks, kTopKThreads, shared_bytes, stream>>>(g.rows(), f);
      check_launch("topk_kernel", "topk");
    });
  });
}

void topk_backward_gpu(const RunContext& rctx, const TensorRef& g, const TensorRef& indices,
                       const kernels::TopKGeometry& geo, const TensorRef& grad, OpReq req) {
  if (req == OpReq::kNull) return;
  const cudaStream_t stream = stream_of(rctx.stream);
  if (req != OpReq::kAdd && grad.size() > 0)
    MX_CUDA_CHECK(
        cudaMemsetAsync(grad.data, 0, static_cast<size_t>(grad.size()) * dtype_size(grad.dtype),
                        stream),
        "topk");
  dispatch_real(grad.dtype, "topk", [&](auto tag) {
    using T = typename decltype(tag)::type;
    dispatch_dtype(indices.dtype, [&](auto itag) {
      using IC = typename decltype(itag)::type;
      launch_elements(g.size(), stream, "topk",
                      kernels::TopKScatter<T, DeviceType<IC>>{
                          grad.ptr<T>(), g.ptr<T>(), device_ptr<IC>(indices), geo.n, geo.inner,
                          geo.k, req == OpReq::kAdd ? OpReq::kAdd : OpReq::kWrite});
    });
  });
}

}  // namespace mx::op::cuda
