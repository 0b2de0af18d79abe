// FullyConnected: Y = X W^T + b over the batch, with X flattened to 2-D
// (flatten=True) or applied to the last axis (flatten=False). One GEMM per
// product through OpenBLAS (oneDNN when built) on the CPU, cuBLAS on a GPU.
#include <type_traits>

#include "op/blas.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/infer_util.h"
#include "op/nn/fully_connected_param.h"
#include "op/registry.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_fully_connected.h"
#endif
#if MX_USE_CUDA
#include "op/cuda/cublas_gemm.h"
#include "op/cuda/fully_connected_gpu.h"
#include "op/nn/fully_connected_kernels.h"
#endif

namespace mx::op {
namespace {

// Rows (batch) and features (K) of the input as the product sees it.
std::pair<int64_t, int64_t> input_matrix(const FullyConnectedParam& p, const Shape& data) {
  if (p.flatten) return {data[0], data.prod(1, data.ndim())};
  return {data.prod(0, data.ndim() - 1), data[data.ndim() - 1]};
}

void infer(const FullyConnectedParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape& data = in[0];
  // The bias and the weight's rows follow from num_hidden alone.
  if (!p.no_bias) assign_shape(in[2], Shape{p.num_hidden}, "input 'bias'");
  if (!data.rank_known() || data.ndim() < 1) {
    if (data.rank_known()) throw ShapeError("input 'data' must have at least 1 dimension");
    assign_shape(in[1], Shape{p.num_hidden, -1}, "input 'weight'");
    return;
  }
  int64_t features = -1;
  if (p.flatten) {
    // The batch may be unknown; the features are the product of the rest.
    bool rest_known = true;
    for (int i = 1; i < data.ndim(); ++i) rest_known = rest_known && data[i] >= 0;
    if (rest_known) features = data.prod(1, data.ndim());
    assign_shape(out[0], Shape{data[0], p.num_hidden}, "output");
  } else {
    features = data[data.ndim() - 1];
    Shape o = data;
    o[o.ndim() - 1] = p.num_hidden;
    assign_shape(out[0], o, "output");
  }
  assign_shape(in[1], Shape{p.num_hidden, features}, "input 'weight'");
}

template <typename T>
void forward(const FullyConnectedParam& p, const ForwardCall& c) {
  auto [rows, k] = input_matrix(p, c.inputs[0].shape);
  const T* x = c.inputs[0].ptr<T>();
  const T* w = c.inputs[1].ptr<T>();
  T* y = c.outputs[0].ptr<T>();
  const int64_t h = p.num_hidden;
  if (c.req[0] == OpReq::kNull) return;
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() && dnnl_impl::fc_worth_it({rows, k, h})) {
      dnnl_impl::fc_forward({rows, k, h}, x, w, p.no_bias ? nullptr : c.inputs[2].ptr<T>(), y,
                            c.req[0], c.resources,
                            c.is_train ? std::nullopt : dnnl_impl::content_stamp(c.inputs[1]));
      return;
    }
#endif
  T beta = c.req[0] == OpReq::kAdd ? T(1) : T(0);
  if (!p.no_bias) {
    // Start from the bias in every row, then accumulate the product on top.
    const T* b = c.inputs[2].ptr<T>();
    // (Never multiply the old contents by 0: uninitialized memory may hold NaN.)
    const bool add = c.req[0] == OpReq::kAdd;
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < h; ++j) y[r * h + j] = add ? y[r * h + j] + b[j] : b[j];
    beta = T(1);
  }
  gemm(false, true, rows, h, k, T(1), x, k, w, k, beta, y, h);
}

void forward_bf16([[maybe_unused]] const FullyConnectedParam& p,
                  [[maybe_unused]] const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
#if MX_USE_DNNL
  if (dnnl_enabled()) {
    auto [rows, k] = input_matrix(p, c.inputs[0].shape);
    dnnl_impl::fc_forward({rows, k, p.num_hidden, DType::kBFloat16}, c.inputs[0].data,
                          c.inputs[1].data, p.no_bias ? nullptr : c.inputs[2].data,
                          c.outputs[0].data, c.req[0], c.resources);
    return;
  }
#endif
  bf16_needs_dnnl("FullyConnected");
}

void backward_bf16([[maybe_unused]] const FullyConnectedParam& p,
                   [[maybe_unused]] const BackwardCall& c) {
#if MX_USE_DNNL
  if (dnnl_enabled()) {
    auto [rows, k] = input_matrix(p, c.inputs[0].shape);
    auto grad = [&](size_t i) { return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].data; };
    dnnl_impl::fc_backward({rows, k, p.num_hidden, DType::kBFloat16}, c.inputs[0].data,
                           c.inputs[1].data, c.out_grads[0].data, grad(0), c.req[0], grad(1),
                           c.req[1], p.no_bias ? nullptr : grad(2),
                           p.no_bias ? OpReq::kNull : c.req[2], c.resources);
    return;
  }
#endif
  bf16_needs_dnnl("FullyConnected");
}

template <typename T>
void backward(const FullyConnectedParam& p, const BackwardCall& c) {
  auto [rows, k] = input_matrix(p, c.inputs[0].shape);
  const int64_t h = p.num_hidden;
  const T* dy = c.out_grads[0].ptr<T>();
  const T* x = c.inputs[0].ptr<T>();
  const T* w = c.inputs[1].ptr<T>();
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() && dnnl_impl::fc_worth_it({rows, k, h})) {
      auto grad = [&](size_t i) {
        return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].ptr<T>();
      };
      dnnl_impl::fc_backward({rows, k, h}, x, w, dy, grad(0), c.req[0], grad(1), c.req[1],
                             p.no_bias ? nullptr : grad(2), p.no_bias ? OpReq::kNull : c.req[2],
                             c.resources);
      return;
    }
#endif
  auto beta = [&](size_t i) { return c.req[i] == OpReq::kAdd ? T(1) : T(0); };
  if (c.req[0] != OpReq::kNull)  // dX = dY W
    gemm(false, false, rows, k, h, T(1), dy, h, w, k, beta(0), c.in_grads[0].ptr<T>(), k);
  if (c.req[1] != OpReq::kNull)  // dW = dY^T X
    gemm(true, false, h, k, rows, T(1), dy, h, x, k, beta(1), c.in_grads[1].ptr<T>(), k);
  if (!p.no_bias && c.req[2] != OpReq::kNull) {  // db = column sums of dY
    T* db = c.in_grads[2].ptr<T>();
    if (c.req[2] != OpReq::kAdd)
      for (int64_t j = 0; j < h; ++j) db[j] = T(0);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t j = 0; j < h; ++j) db[j] += dy[r * h + j];
  }
}

#if MX_USE_CUDA
template <typename T>
void forward_gpu(const FullyConnectedParam& p, const ForwardCall& c) {
  if (c.req[0] == OpReq::kNull) return;
  auto [rows, k] = input_matrix(p, c.inputs[0].shape);
  const int64_t h = p.num_hidden;
  OpReq req = c.req[0];
  if (!p.no_bias) {
    // The bias in every row, then the product added on top.
    cuda::bias_rows_gpu(c.rctx, c.inputs[2], c.outputs[0], rows, h, req);
    req = OpReq::kAdd;
  }
  cuda::gemm(c.rctx, "FullyConnected", kernels::fc_output_product(rows, k, h), c.inputs[0].ptr<T>(),
             c.inputs[1].ptr<T>(), c.outputs[0].ptr<T>(), req);
}

template <typename T>
void backward_gpu(const FullyConnectedParam& p, const BackwardCall& c) {
  auto [rows, k] = input_matrix(p, c.inputs[0].shape);
  const int64_t h = p.num_hidden;
  const T* dy = c.out_grads[0].ptr<T>();
  auto grad = [&](size_t i) { return c.req[i] == OpReq::kNull ? nullptr : c.in_grads[i].ptr<T>(); };
  // dX = dY W
  cuda::gemm(c.rctx, "FullyConnected", kernels::fc_data_grad_product(rows, k, h), dy,
             c.inputs[1].ptr<T>(), grad(0), c.req[0]);
  // dW = dY^T X
  cuda::gemm(c.rctx, "FullyConnected", kernels::fc_weight_grad_product(rows, k, h), dy,
             c.inputs[0].ptr<T>(), grad(1), c.req[1]);
  // db = column sums of dY
  if (!p.no_bias) cuda::column_sums_gpu(c.rctx, c.out_grads[0], c.in_grads[2], rows, h, c.req[2]);
}
#endif

}  // namespace

void register_fully_connected(OpRegistry& r) {
  auto fc =
      r.add<FullyConnectedParam>("FullyConnected")
          .amp(AmpClass::kLowPrecision)
          .describe("Fully connected layer: output = data * weight^T + bias.")
          .inputs([](const FullyConnectedParam& p) {
            return p.no_bias ? std::vector<std::string>{"data", "weight"}
                             : std::vector<std::string>{"data", "weight", "bias"};
          })
          .infer_shape(infer)
          .backward_uses(true, false)
          .expensive()
          .flops([](const FullyConnectedParam&, const ShapeVector& in, const ShapeVector& out) {
            // Each output element: one multiply-add per input feature.
            return 2.0 * known_elements(out[0]) * static_cast<double>(in[1][1]);
          })
          .inference_layer([](const FullyConnectedParam& p, const ShapeVector& in,
                              const ShapeVector&) -> std::optional<InferenceLayer> {
            // 2-D data only (after a Flatten): the fused graphs' inner products.
            if (in[0].ndim() != 2) return std::nullopt;
            InferenceLayer layer;
            layer.kind = LayerKind::kFullyConnected;
            layer.fc.batch = in[0][0];
            layer.fc.inputs = in[0][1];
            layer.fc.outputs = p.num_hidden;
            layer.fc.bias = !p.no_bias;
            return layer;
          })
          .forward_cpu([](const FullyConnectedParam& p, const ForwardCall& c) {
            if (c.inputs[0].dtype == DType::kBFloat16) return forward_bf16(p, c);
            dispatch_real(c.inputs[0].dtype, "FullyConnected",
                          [&](auto tag) { forward<typename decltype(tag)::type>(p, c); });
          })
          .backward_cpu([](const FullyConnectedParam& p, const BackwardCall& c) {
            if (c.inputs[0].dtype == DType::kBFloat16) return backward_bf16(p, c);
            dispatch_real(c.inputs[0].dtype, "FullyConnected",
                          [&](auto tag) { backward<typename decltype(tag)::type>(p, c); });
          });
#if MX_USE_CUDA
  fc.forward(DeviceKind::kGPU, [](const FullyConnectedParam& p, const ForwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, "FullyConnected",
                      [&](auto tag) { forward_gpu<typename decltype(tag)::type>(p, c); });
  });
  fc.backward(DeviceKind::kGPU, [](const FullyConnectedParam& p, const BackwardCall& c) {
    dispatch_real_amp(c.inputs[0].dtype, "FullyConnected",
                      [&](auto tag) { backward_gpu<typename decltype(tag)::type>(p, c); });
  });
#else
  (void)fc;
#endif
}

}  // namespace mx::op
