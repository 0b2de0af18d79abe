// RNN: MXNet's fused recurrent layers (vanilla ReLU/tanh, LSTM, GRU; several
// layers, bidirectional, dropout between layers, LSTM projection and cell
// clipping, sequence lengths) over TNC data and one flat parameter vector
// (rnn_param.h). The algorithm is rnn_driver.h, run here with OpenBLAS GEMMs
// and parallel loops, and on a GPU by cuda/rnn_gpu.cu. In float32 on the
// CPU, oneDNN's RNN primitives run it instead where they take the case
// (dnnl/dnnl_rnn.h: not with sequence lengths or cell clipping), unless
// MX_DNNL=0.
//
// Mixed precision: float16 and bfloat16 on a GPU, bfloat16 on the CPU, run
// rnn_driver.h with 16-bit storage, products that sum in float32 (cuBLAS;
// oneDNN's matmul on the CPU) and the steps computed in float. The AMP pass
// runs RNN in 16 bits on GPUs only: on the CPU its float32 path (oneDNN's
// primitives) is the faster. With sequence lengths it stays in float32, so
// that the lengths are never rounded to 16 bits.
//
// Beyond MXNet 1.9.1 on the CPU, which refuses them: use_sequence_length,
// lstm_state_clip_* and training with projection_size all work here, forward
// and backward, on every device.
#include <algorithm>
#include <random>

#include "op/blas.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/infer_util.h"
#include "op/kernel_util.h"
#include "op/nn/rnn_call.h"
#include "op/nn/rnn_cpu_steps.h"
#include "op/registry.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_matmul.h"
#include "op/dnnl/dnnl_rnn.h"
#endif
#if MX_USE_CUDA
#include "op/cuda/rnn_gpu.h"
#endif

namespace mx::op {
namespace {

std::vector<std::string> rnn_inputs(const RnnParam& p) {
  std::vector<std::string> names{"data", "parameters", "state"};
  if (p.lstm()) names.push_back("state_cell");
  if (p.use_sequence_length) names.push_back("sequence_length");
  return names;
}

// The visible outputs, then the saved forward values for the backward pass.
std::vector<std::string> rnn_outputs(const RnnParam& p) {
  std::vector<std::string> names{"output"};
  if (p.state_outputs) {
    names.push_back("state_output");
    if (p.lstm()) names.push_back("statecell_output");
  }
  names.push_back("workspace");
  return names;
}

// The hidden 'workspace' output holds what either CPU implementation keeps
// for the backward pass (a function of the parameters and shapes alone, so
// that MX_DNNL may change between bindings).
int64_t workspace_size(const RnnParam& p, const RnnGeometry& g) {
  int64_t size = g.workspace_size();
#if MX_USE_DNNL
  size = std::max(size, dnnl_impl::rnn_workspace_size(p, g));
#else
  (void)p;
#endif
  return size;
}

void infer_rnn(const RnnParam& p, ShapeVector& in, ShapeVector&, ShapeVector& out) {
  const Shape& data = in[0];
  if (!data.rank_known()) return;
  require_ndim(data, 3, "input 'data' (steps, batch, features: TNC)");
  if (!data.is_known()) return;
  for (int i = 0; i < 3; ++i)
    if (data[i] < 1) throw ShapeError(str("input 'data' ", data.to_string(), " has an empty axis"));
  const RnnGeometry g(p, data[0], data[1], data[2]);
  assign_shape(in[1], Shape{g.parameter_count()},
               str("input 'parameters' (", g.L, " layer(s) of ", g.H, " units, ",
                   g.D == 2 ? "bidirectional, " : "", "input size ", g.I, ")"));
  assign_shape(in[2], Shape{g.states(), g.N, g.P},
               "input 'state' (layers*directions, batch, state)");
  size_t next = 3;
  if (p.lstm())
    assign_shape(in[next++], Shape{g.states(), g.N, g.H},
                 "input 'state_cell' (layers*directions, batch, state_size)");
  if (p.use_sequence_length) assign_shape(in[next], Shape{g.N}, "input 'sequence_length' (batch)");
  size_t o = 0;
  assign_shape(out[o++], Shape{g.T, g.N, g.D * g.P}, "output");
  if (p.state_outputs) {
    assign_shape(out[o++], Shape{g.states(), g.N, g.P}, "output 'state_output'");
    if (p.lstm()) assign_shape(out[o++], Shape{g.states(), g.N, g.H}, "output 'statecell_output'");
  }
  assign_shape(out[o], Shape{workspace_size(p, g)}, "output 'workspace'");
}

// Every array but the lengths has the data's floating type; lengths may be
// of any type (MXNet's frontends pass int32 or float32). Which device runs
// a 16-bit type is checked when the kernel runs.
void infer_rnn_type(const RnnParam& p, DTypeVector& in, DTypeVector&, DTypeVector& out) {
  std::optional<DType> t;
  const size_t floats = in.size() - (p.use_sequence_length ? 1 : 0);
  for (size_t i = 0; i < floats; ++i)
    if (in[i]) t = in[i];
  for (const auto& o : out)
    if (!t && o) t = o;
  if (!t) return;
  if (!is_floating(*t))
    throw InputError(
        str("RNN computes in float32, float64, float16 or bfloat16, not ", dtype_name(*t)));
  const auto names = rnn_inputs(p);
  for (size_t i = 0; i < floats; ++i) assign_type(in[i], t, "input '" + names[i] + "'");
  if (p.use_sequence_length && !in.back()) in.back() = t;
  for (auto& o : out) assign_type(o, t, "output");
}

double rnn_flops(const RnnParam& p, const ShapeVector& in, const ShapeVector&) {
  if (!in[0].is_known()) return 0;
  const RnnGeometry g(p, in[0][0], in[0][1], in[0][2]);
  double macs = 0;
  for (int64_t l = 0; l < g.L; ++l)
    macs +=
        static_cast<double>(g.D * g.T * g.N) *
        static_cast<double>(g.G * g.H * (g.layer_input(l) + g.P) + (g.projection ? g.P * g.H : 0));
  return 2 * macs;
}

// The CPU as rnn_driver.h's device.
template <typename T>
struct CpuOps {
  std::mt19937_64* rng = nullptr;

  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
            int64_t ldb, bool add, T* c, int64_t ldc) {
    if constexpr (std::is_same_v<T, bf16_t>) {
#if MX_USE_DNNL
      const cuda::RowMajorGemm g{
          .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc};
      // The operator's temporary space holds the driver's scratch, so
      // oneDNN's buffers come from the thread's own (no TempSpace given).
      dnnl_impl::matmul_bf16(g, {}, a, b, c, add ? OpReq::kAdd : OpReq::kWrite, OpResources{});
#endif  // (without oneDNN, check_cpu_type refused bfloat16)
    } else {
      op::gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, add ? T(1) : T(0), c, ldc);
    }
  }
  // The vectorised float32 cell steps (rnn_cpu_steps.h) unless the
  // reference kernels are asked for (MX_DNNL=0, as for the other operators).
  bool fast = std::is_same_v<T, float> && (dnnl_enabled() || !dnnl_built());

  template <typename F>
  void grid(int64_t rows, int64_t cols, const F& f) {
    const int64_t grain = std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(cols, 1));
    if constexpr (std::is_same_v<F, rnn::StepForward<float>> ||
                  std::is_same_v<F, rnn::StepBackward<float>>) {
      if (fast) {
        parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
          if constexpr (std::is_same_v<F, rnn::StepForward<float>>)
            rnn::forward_rows(f, begin, end);
          else
            rnn::backward_rows(f, begin, end);
        });
        return;
      }
    }
    parallel_for(rows, grain, [&](int64_t begin, int64_t end) {
      for (int64_t r = begin; r < end; ++r)
        for (int64_t c = 0; c < cols; ++c) f(r, c);
    });
  }
  void draw_mask(T* mask, int64_t n, double keep) { rnn::draw_dropout_mask(*rng, mask, n, keep); }
};

// bfloat16's products run on oneDNN alone, as FullyConnected's; float16
// runs on a GPU only, as mixed precision in float16 does (train/precision.h).
void check_cpu_type(DType t) {
  if (t == DType::kFloat16)
    throw Error("RNN: float16 runs on a GPU only (on the CPU, mixed precision is bfloat16)");
  if (t == DType::kBFloat16 && !dnnl_enabled()) bf16_needs_dnnl("RNN");
}

template <typename T>
void rnn_forward(const RnnParam& p, const ForwardCall& c) {
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() && dnnl_impl::rnn_forward(p, c)) return;
#endif
  CpuOps<T> ops{&c.resources.rng()};
  rnn::run_forward<T>(p, c, ops);
}

template <typename T>
void rnn_backward(const RnnParam& p, const BackwardCall& c) {
#if MX_USE_DNNL
  if constexpr (std::is_same_v<T, float>)
    if (dnnl_enabled() && dnnl_impl::rnn_backward(p, c)) return;
#endif
  CpuOps<T> ops;
  rnn::run_backward<T>(p, c, ops);
}

}  // namespace

void register_rnn_ops(OpRegistry& r) {
  auto rnn_op =
      r.add<RnnParam>("RNN")
          .amp(
              [](const RnnParam& p) {
                return p.use_sequence_length ? AmpClass::kFloat32 : AmpClass::kLowPrecision;
              },
              "low_precision (with use_sequence_length: float32)")
          // Its bfloat16 steps on the CPU (rnn_driver.h, one small product
          // per step) run slower than oneDNN's float32 LSTM primitive.
          .amp_on_cpu(AmpClass::kFloat32)
          .describe(
              "Recurrent layers over TNC data with MXNet's flat parameter vector: vanilla "
              "(rnn_relu, rnn_tanh), LSTM (gates i, f, g, o) or GRU (r, z, n, reset after the "
              "h-side product); several layers, bidirectional, dropout between layers, LSTM "
              "projection and cell clipping, and sequence lengths, which MXNet 1.9.1 refuses on "
              "the CPU.")
          .inputs(rnn_inputs)
          .outputs(rnn_outputs)
          .visible_outputs(
              [](const RnnParam& p) { return static_cast<int>(rnn_outputs(p).size()) - 1; })
          .infer_shape(infer_rnn)
          .infer_type(infer_rnn_type)
          .resource(ResourceKind::kTempSpace)
          .resource(ResourceKind::kRandom)
          .backward_uses(true, true)
          .backward_ignores_outputs({0})
          .expensive()
          .flops(rnn_flops)
          .forward_cpu([](const RnnParam& p, const ForwardCall& c) {
            check_cpu_type(c.inputs[0].dtype);
            dispatch_real_bf16(c.inputs[0].dtype, "RNN",
                               [&](auto tag) { rnn_forward<typename decltype(tag)::type>(p, c); });
          })
          .backward_cpu([](const RnnParam& p, const BackwardCall& c) {
            check_cpu_type(c.inputs[0].dtype);
            dispatch_real_bf16(c.inputs[0].dtype, "RNN",
                               [&](auto tag) { rnn_backward<typename decltype(tag)::type>(p, c); });
          });
#if MX_USE_CUDA
  rnn_op.forward(DeviceKind::kGPU, cuda::rnn_forward_gpu);
  rnn_op.backward(DeviceKind::kGPU, cuda::rnn_backward_gpu);
#else
  (void)rnn_op;
#endif
}

}  // namespace mx::op
