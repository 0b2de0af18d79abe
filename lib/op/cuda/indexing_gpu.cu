#include "op/cuda/device_value.cuh"
#include "op/cuda/indexing_gpu.h"
#include "op/cuda/launch.cuh"
#include "op/infer_util.h"
#include "op/tensor/indexing_kernels.h"

namespace mx::op::cuda {
namespace {

// Calls fn(TypeTag<C>) with C the C++ type of t's dtype; the kernels use DeviceType<C>.
template <typename Fn>
void dispatch_any(const TensorRef& t, Fn&& fn) {
  dispatch_dtype(t.dtype, [&](auto tag) { fn(tag); });
}

// Runs check(bad) for a kernel that sets *bad on a violation and returns
// whether it did (waiting for the stream).
template <typename Launch>
bool found_violation(const RunContext& rctx, const OpResources& resources, const char* where,
                     Launch launch) {
  const cudaStream_t stream = stream_of(rctx.stream);
  int* bad = static_cast<int*>(resources.temp_space(sizeof(int)));
  MX_CUDA_CHECK(cudaMemsetAsync(bad, 0, sizeof(int), stream), where);
  launch(bad);
  int host = 0;
  MX_CUDA_CHECK(cudaMemcpyAsync(&host, bad, sizeof(int), cudaMemcpyDeviceToHost, stream), where);
  MX_CUDA_CHECK(cudaStreamSynchronize(stream), where);
  return host != 0;
}

void zero_unless_adding(const RunContext& rctx, const char* where, const TensorRef& t, OpReq req) {
  if (req == OpReq::kAdd || t.size() == 0) return;
  MX_CUDA_CHECK(cudaMemsetAsync(t.data, 0, static_cast<size_t>(t.size()) * dtype_size(t.dtype),
                                stream_of(rctx.stream)),
                where);
}

}  // namespace

void take_gpu(const RunContext& rctx, const TensorRef& data, const TensorRef& indices,
              const kernels::TakeLayout& l, kernels::TakeMode mode, const TensorRef& out, OpReq req,
              const OpResources& resources) {
  if (req == OpReq::kNull || out.size() == 0) return;
  if (l.size == 0) throw Error("take: cannot take from an axis of size 0");
  const cudaStream_t stream = stream_of(rctx.stream);
  dispatch_any(indices, [&](auto itag) {
    using IC = typename decltype(itag)::type;
    using I = DeviceType<IC>;
    const I* idx = device_ptr<IC>(indices);
    if (mode == kernels::TakeMode::kRaise &&
        found_violation(rctx, resources, "take", [&](int* bad) {
          launch_elements(l.count, stream, "take", kernels::TakeCheck<I>{idx, l.size, bad});
        }))
      throw Error(str("take: indices out of range [0, ", l.size - 1, "] (mode 'raise')"));
    dispatch_any(data, [&](auto tag) {
      using C = typename decltype(tag)::type;
      using T = DeviceType<C>;
      launch_elements(
          out.size(), stream, "take",
          kernels::TakeGather<T, I>{device_ptr<C>(out), device_ptr<C>(data), idx, l, mode, req});
    });
  });
}

void take_backward_gpu(const RunContext& rctx, const TensorRef& indices, const TensorRef& g,
                       const kernels::TakeLayout& l, kernels::TakeMode mode, const TensorRef& grad,
                       OpReq req) {
  if (req == OpReq::kNull) return;
  zero_unless_adding(rctx, "take", grad, req);
  dispatch_any(indices, [&](auto itag) {
    using IC = typename decltype(itag)::type;
    using I = DeviceType<IC>;
    dispatch_real(grad.dtype, "take", [&](auto tag) {
      using T = typename decltype(tag)::type;
      launch_elements(g.size(), stream_of(rctx.stream), "take",
                      kernels::TakeScatterAdd<T, I>{grad.ptr<T>(), g.ptr<T>(),
                                                    device_ptr<IC>(indices), l, mode});
    });
  });
}

void gather_nd_gpu(const RunContext& rctx, const TensorRef& data, const TensorRef& indices,
                   const kernels::GatherNdLayout& l, const TensorRef& out, OpReq req,
                   const OpResources& resources) {
  if (req == OpReq::kNull || out.size() == 0) return;
  const cudaStream_t stream = stream_of(rctx.stream);
  dispatch_any(indices, [&](auto itag) {
    using IC = typename decltype(itag)::type;
    using I = DeviceType<IC>;
    const I* idx = device_ptr<IC>(indices);
    if (found_violation(rctx, resources, "gather_nd", [&](int* bad) {
          launch_elements(indices.size(), stream, "gather_nd",
                          kernels::GatherNdCheck<I>{idx, l, bad});
        }))
      throw Error(
          str("gather_nd: indices out of bounds for data of shape ", data.shape.to_string()));
    dispatch_any(data, [&](auto tag) {
      using C = typename decltype(tag)::type;
      using T = DeviceType<C>;
      launch_elements(
          out.size(), stream, "gather_nd",
          kernels::GatherNd<T, I>{device_ptr<C>(out), device_ptr<C>(data), idx, l, req});
    });
  });
}

void gather_nd_backward_gpu(const RunContext& rctx, const TensorRef& indices, const TensorRef& g,
                            const kernels::GatherNdLayout& l, const TensorRef& grad, OpReq req) {
  if (req == OpReq::kNull) return;
  zero_unless_adding(rctx, "gather_nd", grad, req);
  dispatch_any(indices, [&](auto itag) {
    using IC = typename decltype(itag)::type;
    using I = DeviceType<IC>;
    dispatch_real(grad.dtype, "gather_nd", [&](auto tag) {
      using T = typename decltype(tag)::type;
      launch_elements(
          g.size(), stream_of(rctx.stream), "gather_nd",
          kernels::GatherNdScatterAdd<T, I>{grad.ptr<T>(), g.ptr<T>(), device_ptr<IC>(indices), l});
    });
  });
}

void where_gpu(const RunContext& rctx, const TensorRef& cond, const TensorRef& x,
               const TensorRef& y, int64_t inner, const TensorRef& out, OpReq req) {
  if (req == OpReq::kNull || out.size() == 0) return;
  dispatch_any(cond, [&](auto ctag) {
    using CC = typename decltype(ctag)::type;
    dispatch_any(x, [&](auto tag) {
      using C = typename decltype(tag)::type;
      using T = DeviceType<C>;
      launch_elements(
          out.size(), stream_of(rctx.stream), "where",
          kernels::WhereSelect<T, DeviceType<CC>>{device_ptr<C>(out), device_ptr<CC>(cond),
                                                  device_ptr<C>(x), device_ptr<C>(y), inner, req});
    });
  });
}

void where_backward_gpu(const RunContext& rctx, const TensorRef& cond, const TensorRef& g,
                        int64_t inner, bool x_side, const TensorRef& grad, OpReq req) {
  if (req == OpReq::kNull || grad.size() == 0) return;
  dispatch_any(cond, [&](auto ctag) {
    using CC = typename decltype(ctag)::type;
    dispatch_any(g, [&](auto tag) {
      using C = typename decltype(tag)::type;
      using T = DeviceType<C>;
      launch_elements(
          grad.size(), stream_of(rctx.stream), "where",
          kernels::WhereGrad<T, DeviceType<CC>>{device_ptr<C>(grad), device_ptr<C>(g),
                                                device_ptr<CC>(cond), inner, x_side, req});
    });
  });
}

}  // namespace mx::op::cuda
