// The RNN operator on cuDNN's RNN API: see cudnn_rnn.h.
#include <cudnn.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/error.h"
#include "base/logging.h"
#include "op/cuda/cuda_check.h"
#include "op/cuda/cudnn_rnn.h"
#include "op/cuda/handles.h"
#include "op/cuda/launch.cuh"
#include "op/cuda/math_settings.h"

namespace mx::op::cuda {
namespace {

constexpr const char* kOp = "RNN";

struct FillInt32 {
  int32_t* p;
  int32_t value;
  __device__ void operator()(int64_t i) const { p[i] = value; }
};

struct AddFloats {
  float* dst;
  const float* src;
  __device__ void operator()(int64_t i) const { dst[i] += src[i]; }
};

// A block of `count` floats at `mx` in MXNet's flat vector and at `cudnn`
// in cuDNN's weight space (element offsets).
struct Block {
  int64_t mx, cudnn, count;
};

// Pieces of temporary memory carved from one request, each 256-byte aligned.
class Carver {
 public:
  size_t add(size_t bytes) {
    const size_t at = total_;
    total_ += (bytes + 255) / 256 * 256;
    return at;
  }
  size_t total() const { return total_; }

 private:
  size_t total_ = 0;
};

// The same answer for a forward pass in training or inference and the
// backward pass, so that the backward pass reads what its forward pass wrote.
bool fits(const RnnParam& p, DType dtype) {
  if (dtype != DType::kFloat32) return false;
  if (p.projection_size || p.clips() || p.use_sequence_length) return false;
  return !(p.p > 0 && p.num_layers > 1);
}

// The descriptors of one call and where cuDNN keeps each of MXNet's weights.
class RnnPlan {
 public:
  RnnPlan(const RnnParam& p, const RnnGeometry& g, cudnnHandle_t handle) : g_(g), handle_(handle) {
    check(cudnnCreateRNNDescriptor(&rnn_), "cudnnCreateRNNDescriptor");
    check(cudnnCreateDropoutDescriptor(&dropout_), "cudnnCreateDropoutDescriptor");
    check(cudnnCreateRNNDataDescriptor(&x_), "cudnnCreateRNNDataDescriptor");
    check(cudnnCreateRNNDataDescriptor(&y_), "cudnnCreateRNNDataDescriptor");
    check(cudnnCreateTensorDescriptor(&h_), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&c_), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&matrix_), "cudnnCreateTensorDescriptor");
    check(cudnnCreateTensorDescriptor(&bias_), "cudnnCreateTensorDescriptor");
    // No dropout in the calls that reach here (fits()): no RNG states.
    check(cudnnSetDropoutDescriptor(dropout_, handle, 0.0f, nullptr, 0, 0),
          "cudnnSetDropoutDescriptor");
    const cudnnRNNMode_t cell = p.mode == RnnMode::kLstm      ? CUDNN_LSTM
                                : p.mode == RnnMode::kGru     ? CUDNN_GRU
                                : p.mode == RnnMode::kRnnRelu ? CUDNN_RNN_RELU
                                                              : CUDNN_RNN_TANH;
    // Without MX_GPU_TF32 float32 stays float32 (no tensor-core conversion).
    const cudnnMathType_t math = tf32_allowed() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
    check(cudnnSetRNNDescriptor_v8(rnn_, CUDNN_RNN_ALGO_STANDARD, cell, CUDNN_RNN_DOUBLE_BIAS,
                                   g.D == 2 ? CUDNN_BIDIRECTIONAL : CUDNN_UNIDIRECTIONAL,
                                   CUDNN_LINEAR_INPUT, CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, math,
                                   static_cast<int32_t>(g.I), static_cast<int32_t>(g.H),
                                   static_cast<int32_t>(g.H), static_cast<int32_t>(g.L), dropout_,
                                   CUDNN_RNN_PADDED_IO_DISABLED),
          "cudnnSetRNNDescriptor_v8");
    const std::vector<int> lengths(static_cast<size_t>(g.N), static_cast<int>(g.T));
    check(cudnnSetRNNDataDescriptor(x_, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                    static_cast<int>(g.T), static_cast<int>(g.N),
                                    static_cast<int>(g.I), lengths.data(), nullptr),
          "cudnnSetRNNDataDescriptor");
    check(cudnnSetRNNDataDescriptor(y_, CUDNN_DATA_FLOAT, CUDNN_RNN_DATA_LAYOUT_SEQ_MAJOR_UNPACKED,
                                    static_cast<int>(g.T), static_cast<int>(g.N),
                                    static_cast<int>(g.D * g.H), lengths.data(), nullptr),
          "cudnnSetRNNDataDescriptor");
    const int dims[3] = {static_cast<int>(g.L * g.D), static_cast<int>(g.N), static_cast<int>(g.H)};
    const int strides[3] = {static_cast<int>(g.N * g.H), static_cast<int>(g.H), 1};
    check(cudnnSetTensorNdDescriptor(h_, CUDNN_DATA_FLOAT, 3, dims, strides),
          "cudnnSetTensorNdDescriptor");
    check(cudnnSetTensorNdDescriptor(c_, CUDNN_DATA_FLOAT, 3, dims, strides),
          "cudnnSetTensorNdDescriptor");
    check(cudnnGetRNNWeightSpaceSize(handle, rnn_, &weight_bytes_), "cudnnGetRNNWeightSpaceSize");
    check(cudnnGetRNNTempSpaceSizes(handle, rnn_, CUDNN_FWD_MODE_TRAINING, x_, &work_bytes_,
                                    &reserve_bytes_),
          "cudnnGetRNNTempSpaceSizes");
  }
  ~RnnPlan() {
    cudnnDestroyTensorDescriptor(bias_);
    cudnnDestroyTensorDescriptor(matrix_);
    cudnnDestroyTensorDescriptor(c_);
    cudnnDestroyTensorDescriptor(h_);
    cudnnDestroyRNNDataDescriptor(y_);
    cudnnDestroyRNNDataDescriptor(x_);
    cudnnDestroyDropoutDescriptor(dropout_);
    cudnnDestroyRNNDescriptor(rnn_);
  }
  RnnPlan(const RnnPlan&) = delete;
  RnnPlan& operator=(const RnnPlan&) = delete;

  // Elements of the output sequence, which the workspace keeps before the
  // reserve space.
  int64_t output_elements() const { return g_.T * g_.N * g_.D * g_.H; }
  // Whether the output sequence and the reserve space fit `workspace` floats.
  bool fits_workspace(int64_t workspace) const {
    return static_cast<size_t>(reserve_at()) * sizeof(float) + reserve_bytes_ <=
           static_cast<size_t>(workspace) * sizeof(float);
  }
  float* reserve(float* workspace) const { return workspace + reserve_at(); }

  // MXNet's blocks in cuDNN's weight space at `space` (a buffer of
  // weight_bytes()), adjacent ones merged: cuDNN keeps a layer's matrices
  // and its biases in MXNet's gate order, so each layer and direction gives
  // about two blocks.
  std::vector<Block> blocks(const float* space) {
    std::vector<Block> out;
    const int64_t G = g_.G, H = g_.H;
    for (int64_t l = 0; l < g_.L; ++l)
      for (int64_t d = 0; d < g_.D; ++d) {
        const int64_t in = g_.layer_input(l);
        for (int64_t lin = 0; lin < 2 * G; ++lin) {
          void* m = nullptr;
          void* b = nullptr;
          check(cudnnGetRNNWeightParams(handle_, rnn_, static_cast<int32_t>(l * g_.D + d),
                                        weight_bytes_, space, static_cast<int32_t>(lin), matrix_,
                                        &m, bias_, &b),
                "cudnnGetRNNWeightParams");
          const bool x_side = lin < G;
          const int64_t gate = x_side ? lin : lin - G;
          const int64_t cols = x_side ? in : H;
          const int64_t mx_matrix = (x_side ? g_.wx(l, d) : g_.wh(l, d)) + gate * H * cols;
          const int64_t mx_bias = (x_side ? g_.bx(l, d) : g_.bh(l, d)) + gate * H;
          add(out, mx_matrix, offset(space, m), H * cols);
          add(out, mx_bias, offset(space, b), H);
        }
      }
    return out;
  }

  cudnnRNNDescriptor_t rnn() const { return rnn_; }
  cudnnRNNDataDescriptor_t x() const { return x_; }
  cudnnRNNDataDescriptor_t y() const { return y_; }
  cudnnTensorDescriptor_t h() const { return h_; }
  cudnnTensorDescriptor_t c() const { return c_; }
  size_t weight_bytes() const { return weight_bytes_; }
  size_t work_bytes() const { return work_bytes_; }
  size_t reserve_bytes() const { return reserve_bytes_; }

 private:
  // The reserve space's offset in the workspace: after the output sequence,
  // 256-byte aligned as cuDNN's buffers.
  int64_t reserve_at() const { return (output_elements() + 63) / 64 * 64; }
  static void check(cudnnStatus_t status, const char* call) {
    ::mx::op::cuda::check(status, call, kOp);
  }
  int64_t offset(const float* space, const void* at) const {
    MX_CHECK(at != nullptr, "RNN: cuDNN gave no address for a weight");
    return static_cast<const float*>(at) - space;
  }
  static void add(std::vector<Block>& out, int64_t mx, int64_t cudnn, int64_t count) {
    if (!out.empty() && out.back().mx + out.back().count == mx &&
        out.back().cudnn + out.back().count == cudnn) {
      out.back().count += count;
      return;
    }
    out.push_back({mx, cudnn, count});
  }

  const RnnGeometry& g_;
  cudnnHandle_t handle_;
  cudnnRNNDescriptor_t rnn_ = nullptr;
  cudnnDropoutDescriptor_t dropout_ = nullptr;
  cudnnRNNDataDescriptor_t x_ = nullptr, y_ = nullptr;
  cudnnTensorDescriptor_t h_ = nullptr, c_ = nullptr, matrix_ = nullptr, bias_ = nullptr;
  size_t weight_bytes_ = 0, work_bytes_ = 0, reserve_bytes_ = 0;
};

void copy_floats(float* dst, const float* src, int64_t n, cudaStream_t stream) {
  if (n > 0)
    MX_CUDA_CHECK(cudaMemcpyAsync(dst, src, static_cast<size_t>(n) * sizeof(float),
                                  cudaMemcpyDeviceToDevice, stream),
                  kOp);
}

// dst (under `req`) from src, n floats.
void store(float* dst, const float* src, int64_t n, OpReq req, cudaStream_t stream) {
  if (req == OpReq::kNull || dst == src) return;
  if (req == OpReq::kAdd)
    launch_elements(n, stream, kOp, AddFloats{dst, src});
  else
    copy_floats(dst, src, n, stream);
}

// The common temporary memory of a call: the sequence lengths (all T, on
// the device, as cuDNN reads them there), the weight space, cuDNN's work
// space, then `extra` more pieces.
struct CallSpace {
  int32_t* lengths;
  float* weights;
  void* work;
  std::vector<float*> extra;
};

CallSpace take_space(const RnnPlan& plan, const RnnGeometry& g, const OpResources& res,
                     const std::vector<int64_t>& extra_floats, cudaStream_t stream) {
  Carver carve;
  const size_t lengths = carve.add(static_cast<size_t>(g.N) * sizeof(int32_t));
  const size_t weights = carve.add(plan.weight_bytes());
  const size_t work = carve.add(plan.work_bytes());
  std::vector<size_t> extra;
  for (int64_t n : extra_floats) extra.push_back(carve.add(static_cast<size_t>(n) * sizeof(float)));
  auto* base = static_cast<char*>(res.temp_space(carve.total()));
  CallSpace s{reinterpret_cast<int32_t*>(base + lengths),
              reinterpret_cast<float*>(base + weights),
              base + work,
              {}};
  for (size_t at : extra) s.extra.push_back(reinterpret_cast<float*>(base + at));
  launch_elements(g.N, stream, kOp, FillInt32{s.lengths, static_cast<int32_t>(g.T)});
  return s;
}

}  // namespace

int64_t cudnn_rnn_workspace_bound(const RnnGeometry& g) {
  // The output sequence, then per layer, direction and step room for the
  // gates and four more values per unit (cell, output, activations), and
  // 64 KiB for cuDNN's alignment of small calls.
  constexpr int64_t kSlack = 16384;
  return g.T * g.N * g.D * g.H + g.L * g.D * g.T * g.N * (g.G + 4) * g.H + kSlack;
}

bool cudnn_rnn_forward(const RnnParam& p, const ForwardCall& c) {
  if (!fits(p, c.inputs[0].dtype)) return false;
  const RnnGeometry g(p, c.inputs[0].shape[0], c.inputs[0].shape[1], c.inputs[0].shape[2]);
  const cudaStream_t stream = stream_of(c.rctx.stream);
  RnnPlan plan(p, g, cudnn_handle(c.rctx));
  const TensorRef& workspace = c.outputs.back();
  if (!plan.fits_workspace(workspace.size())) {
    MX_LOG(kDebug) << "RNN: cuDNN's reserve space (" << plan.reserve_bytes()
                   << " bytes) does not fit the workspace; the operator's own kernels run";
    return false;
  }
  const int64_t y_elements = plan.output_elements();
  const int64_t state_elements = g.L * g.D * g.N * g.H;
  const bool state_out = p.state_outputs;
  auto state_req = [&](size_t i) { return state_out ? c.req[i] : OpReq::kNull; };
  // Inference too runs cuDNN's training pass, which keeps the output
  // sequence and the reserve space in the workspace as the operator's own
  // kernels do: a backward pass may follow any forward pass (the harness's
  // checks of an inference pass's gradients, autograd outside training).
  CallSpace s = take_space(plan, g, c.resources,
                           {state_req(1) == OpReq::kAdd ? state_elements : 0,
                            p.lstm() && state_req(2) == OpReq::kAdd ? state_elements : 0},
                           stream);
  const float* params = c.inputs[1].ptr<float>();
  for (const Block& b : plan.blocks(s.weights))
    copy_floats(s.weights + b.cudnn, params + b.mx, b.count, stream);
  float* y = workspace.ptr<float>();
  auto state_target = [&](size_t i, float* temp) -> float* {
    const OpReq req = state_req(i);
    if (req == OpReq::kNull) return nullptr;
    return req == OpReq::kAdd ? temp : c.outputs[i].ptr<float>();
  };
  float* hy = state_target(1, s.extra[0]);
  float* cy = p.lstm() ? state_target(2, s.extra[1]) : nullptr;
  check(cudnnRNNForward(
            cudnn_handle(c.rctx), plan.rnn(), CUDNN_FWD_MODE_TRAINING, s.lengths, plan.x(),
            c.inputs[0].ptr<float>(), plan.y(), y, plan.h(), c.inputs[2].ptr<float>(), hy, plan.c(),
            p.lstm() ? c.inputs[3].ptr<float>() : nullptr, cy, plan.weight_bytes(), s.weights,
            plan.work_bytes(), s.work, plan.reserve_bytes(), plan.reserve(workspace.ptr<float>())),
        "cudnnRNNForward", kOp);
  store(c.outputs[0].ptr<float>(), y, y_elements, c.req[0], stream);
  if (state_req(1) == OpReq::kAdd)
    store(c.outputs[1].ptr<float>(), hy, state_elements, OpReq::kAdd, stream);
  if (p.lstm() && state_req(2) == OpReq::kAdd)
    store(c.outputs[2].ptr<float>(), cy, state_elements, OpReq::kAdd, stream);
  return true;
}

bool cudnn_rnn_backward(const RnnParam& p, const BackwardCall& c) {
  if (!fits(p, c.inputs[0].dtype)) return false;
  const RnnGeometry g(p, c.inputs[0].shape[0], c.inputs[0].shape[1], c.inputs[0].shape[2]);
  const cudaStream_t stream = stream_of(c.rctx.stream);
  RnnPlan plan(p, g, cudnn_handle(c.rctx));
  const TensorRef& workspace = c.outputs.back();
  // The same choice as the forward pass made, from the same sizes.
  if (!plan.fits_workspace(workspace.size())) return false;
  const int64_t x_elements = g.T * g.N * g.I;
  const int64_t state_elements = g.L * g.D * g.N * g.H;
  const OpReq dx_req = c.req[0], dw_req = c.req[1], dhx_req = c.req[2];
  const OpReq dcx_req = p.lstm() ? c.req[3] : OpReq::kNull;
  const bool dx_direct = dx_req == OpReq::kWrite || dx_req == OpReq::kInplace;
  CallSpace s = take_space(
      plan, g, c.resources,
      {dx_direct ? 0 : x_elements, dhx_req == OpReq::kAdd ? state_elements : 0,
       dcx_req == OpReq::kAdd ? state_elements : 0,
       dw_req == OpReq::kNull ? 0 : static_cast<int64_t>(plan.weight_bytes() / sizeof(float)),
       static_cast<int64_t>(plan.reserve_bytes() / sizeof(float)) + 1},
      stream);
  const float* params = c.inputs[1].ptr<float>();
  const std::vector<Block> blocks = plan.blocks(s.weights);
  for (const Block& b : blocks) copy_floats(s.weights + b.cudnn, params + b.mx, b.count, stream);
  const float* y = workspace.ptr<float>();
  // cuDNN's backward passes write into the reserve space: they get a copy,
  // so that the forward pass's stays for another backward pass.
  float* reserve = s.extra[4];
  MX_CUDA_CHECK(cudaMemcpyAsync(reserve, plan.reserve(workspace.ptr<float>()), plan.reserve_bytes(),
                                cudaMemcpyDeviceToDevice, stream),
                kOp);
  auto target = [&](OpReq req, size_t i, float* temp) -> float* {
    if (req == OpReq::kNull) return nullptr;
    return req == OpReq::kAdd ? temp : c.in_grads[i].ptr<float>();
  };
  float* dx = dx_direct ? c.in_grads[0].ptr<float>() : s.extra[0];
  float* dhx = target(dhx_req, 2, s.extra[1]);
  float* dcx = p.lstm() ? target(dcx_req, 3, s.extra[2]) : nullptr;
  const float* dhy = p.state_outputs ? c.out_grads[1].ptr<float>() : nullptr;
  const float* dcy = p.state_outputs && p.lstm() ? c.out_grads[2].ptr<float>() : nullptr;
  const float* cx = p.lstm() ? c.inputs[3].ptr<float>() : nullptr;
  cudnnHandle_t handle = cudnn_handle(c.rctx);
  check(cudnnRNNBackwardData_v8(handle, plan.rnn(), s.lengths, plan.y(), y,
                                c.out_grads[0].ptr<float>(), plan.x(), dx, plan.h(),
                                c.inputs[2].ptr<float>(), dhy, dhx, plan.c(), cx, dcy, dcx,
                                plan.weight_bytes(), s.weights, plan.work_bytes(), s.work,
                                plan.reserve_bytes(), reserve),
        "cudnnRNNBackwardData_v8", kOp);
  if (!dx_direct) store(c.in_grads[0].ptr<float>(), dx, x_elements, dx_req, stream);
  if (dhx_req == OpReq::kAdd)
    store(c.in_grads[2].ptr<float>(), dhx, state_elements, dhx_req, stream);
  if (dcx_req == OpReq::kAdd)
    store(c.in_grads[3].ptr<float>(), dcx, state_elements, dcx_req, stream);
  if (dw_req != OpReq::kNull) {
    // cuDNN adds into the weight gradients: start them at zero.
    float* dw = s.extra[3];
    MX_CUDA_CHECK(cudaMemsetAsync(dw, 0, plan.weight_bytes(), stream), kOp);
    check(cudnnRNNBackwardWeights_v8(handle, plan.rnn(), CUDNN_WGRAD_MODE_ADD, s.lengths, plan.x(),
                                     c.inputs[0].ptr<float>(), plan.h(), c.inputs[2].ptr<float>(),
                                     plan.y(), y, plan.weight_bytes(), dw, plan.work_bytes(),
                                     s.work, plan.reserve_bytes(), reserve),
          "cudnnRNNBackwardWeights_v8", kOp);
    float* dparams = c.in_grads[1].ptr<float>();
    for (const Block& b : blocks) store(dparams + b.mx, dw + b.cudnn, b.count, dw_req, stream);
  }
  // The lengths input is refused here (fits()), so there is no gradient of it to fill.
  return true;
}

}  // namespace mx::op::cuda
