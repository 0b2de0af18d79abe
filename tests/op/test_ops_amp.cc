// Mixed precision at the operator level: amp_cast and amp_multicast (gradients,
// MXNet 1.9.1's values and type rules), and every operator that runs in
// bfloat16 under the AMP pass against its float32 self within stated bounds.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <tuple>

#include "base/strings.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/invoke.h"
#include "op/registry.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;
using op::AttrMap;
using op::DTypeVector;
using op::OpReq;

TEST_CASE("reference: amp_cast and amp_multicast against MXNet 1.9.1") {
  auto cases = load_reference_cases("amp");
  CHECK(cases.size() >= 7);
  // MXNet's cast to bfloat16 without oneDNN truncates; oneDNN's (MXNet's
  // fast path, PyTorch's) and mx's round to nearest even: one bfloat16 step
  // (2^-8 relative) apart at most.
  for (const auto& c : cases)
    check_reference(c, c.id.find("bf16") != std::string::npos ? 1.0 / 128 : 1e-4, 1e-5);
}

TEST_CASE("gradients: amp_cast and amp_multicast pass float64 through") {
  check_gradient("amp_cast", {{"dtype", "bfloat16"}}, {Shape{3, 4}});
  check_gradient("amp_multicast", {{"num_outputs", "2"}}, {Shape{2, 3}, Shape{2, 3}});
}

namespace {

std::vector<std::optional<DType>> multicast_types(std::vector<DType> in, bool narrow) {
  op::OpInstance op("amp_multicast", {{"num_outputs", std::to_string(in.size())},
                                      {"cast_narrow", narrow ? "1" : "0"}});
  DTypeVector ins(in.begin(), in.end()), aux, out(in.size());
  op.infer_type(ins, aux, out);
  return out;
}

}  // namespace

TEST_CASE("amp_multicast decides types as MXNet's AMPMultiCastType") {
  const DType f32 = DType::kFloat32, f16 = DType::kFloat16, bf16 = DType::kBFloat16;
  using V = std::vector<std::optional<DType>>;
  CHECK(multicast_types({f16, f32}, false) == V{f32, f32});
  CHECK(multicast_types({f16, f32}, true) == V{f16, f16});
  CHECK(multicast_types({bf16, f32}, true) == V{bf16, bf16});
  // Without float32 among them, input 0's type wins (as MXNet 1.9.1 does).
  CHECK(multicast_types({bf16, f16}, false) == V{bf16, bf16});
  CHECK(multicast_types({f16, bf16}, false) == V{f16, f16});
  CHECK(multicast_types({DType::kInt32, f16, f32}, false) == V{DType::kInt32, f32, f32});
  op::OpInstance cast("amp_cast", {{"dtype", "bfloat16"}});
  for (auto [in, want] :
       {std::pair{f32, bf16}, std::pair{f16, bf16}, std::pair{DType::kFloat64, DType::kFloat64},
        std::pair{DType::kInt64, DType::kInt64}}) {
    DTypeVector ins{in}, aux, out(1);
    cast.infer_type(ins, aux, out);
    CHECK(out[0] == want);
  }
}

// ---- each operator in bfloat16 against float32 ---------------------------------

namespace {

NDArray random_f32(const Shape& shape, std::mt19937_64& rng, double low, double high) {
  std::uniform_real_distribution<double> u(low, high);
  std::vector<float> v(static_cast<size_t>(shape.size()));
  for (auto& x : v) x = static_cast<float>(u(rng));
  return NDArray::from_vector<float>(shape, v);
}

NDArray cast_to(const NDArray& a, DType dtype) {
  return op::invoke("amp_cast", {a}, {{"dtype", dtype_name(dtype)}})[0];
}

// The largest |a - b| over the largest |b| (at least 1e-3: a scale, not a divisor of 0).
double relative_error(const NDArray& a, const NDArray& b) {
  auto x = cast_to(a, DType::kFloat32).to_vector<float>();
  auto y = cast_to(b, DType::kFloat32).to_vector<float>();
  REQUIRE(x.size() == y.size());
  double worst = 0, scale = 1e-3;
  for (size_t i = 0; i < x.size(); ++i) {
    const double d = std::abs(static_cast<double>(x[i]) - y[i]);
    if (!std::isfinite(d)) return INFINITY;  // a NaN or infinity fails
    worst = std::max(worst, d);
    scale = std::max(scale, std::abs(static_cast<double>(y[i])));
  }
  return worst / scale;
}

struct Pass {
  std::vector<NDArray> outputs, grads;
};

// Forward and backward (head gradients `heads`) on `device` with the first
// `low_inputs` inputs and the first head gradient in `dtype`.
Pass run_in(const std::string& name, const AttrMap& attrs, const std::vector<NDArray>& inputs,
            const std::vector<Shape>& aux_shapes, const std::vector<NDArray>& heads, DType dtype,
            size_t low_inputs, Context device) {
  op::OpInstance op(name, attrs);
  std::vector<NDArray> aux;  // float32 ones (BatchNorm's moving statistics), fresh each run
  for (const Shape& s : aux_shapes) aux.push_back(NDArray::full(s, 1.0, device));
  std::vector<NDArray> in, head;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const NDArray x = inputs[i].copy_to(device);
    in.push_back(i < low_inputs ? cast_to(x, dtype) : x);
  }
  for (size_t i = 0; i < heads.size(); ++i) {
    const NDArray g = heads[i].copy_to(device);
    head.push_back(i < low_inputs ? cast_to(g, dtype) : g);
  }
  Pass p;
  p.outputs = op::invoke(op, in, aux, true);
  std::vector<OpReq> req;
  for (const auto& x : in) {
    p.grads.push_back(NDArray::zeros(x.shape(), device, x.dtype()));
    req.push_back(OpReq::kWrite);
  }
  const size_t visible = static_cast<size_t>(op.num_visible_outputs());
  std::vector<NDArray> visible_heads(head.begin(), head.begin() + static_cast<long>(visible));
  op::invoke_backward(op, visible_heads, in, p.outputs, aux, p.grads, req);
  return p;
}

struct LowCase {
  std::string op;
  AttrMap attrs;
  std::vector<Shape> inputs;
  double low = -1.0;  // inputs drawn from [low, 1]
  // How many leading inputs (and outputs) take the low precision: all, or
  // the data only for an operator whose parameters stay float32.
  size_t low_inputs = SIZE_MAX;
  std::vector<Shape> aux = {};  // auxiliary states, float32
  // The bounds' multiple: a recurrence (RNN) carries each step's rounding
  // into the next, through 5 steps here.
  double bound_scale = 1.0;
};

// The bounds: bfloat16 keeps 8 significant bits (relative rounding 2^-9),
// and oneDNN sums its products in float32, so outputs and gradients stay
// within 2% of their scale (the rounding of the inputs dominates). float16
// keeps 11 bits (2^-12), eight times finer: 0.5%.
constexpr double kBound = 2e-2;
constexpr double kFloat16Bound = 5e-3;

void check_low_precision(const LowCase& c, DType low = DType::kBFloat16,
                         Context device = Context::cpu()) {
  CAPTURE(c.op);
  std::string attrs;
  for (const auto& [key, value] : c.attrs) attrs += key + "=" + value + " ";
  CAPTURE(attrs);
  const std::string type = dtype_name(low);
  CAPTURE(type);
  const double bound = (low == DType::kFloat16 ? kFloat16Bound : kBound) * c.bound_scale;
  std::mt19937_64 rng(11);
  std::vector<NDArray> inputs;
  for (const Shape& s : c.inputs) inputs.push_back(random_f32(s, rng, c.low, 1.0));
  std::vector<NDArray> heads;
  std::vector<NDArray> aux;
  for (const Shape& s : c.aux) aux.push_back(NDArray::full(s, 1.0));
  for (const auto& y : op::invoke(c.op, inputs, c.attrs, aux))
    heads.push_back(random_f32(y.shape(), rng, -1, 1));
  const Pass f32 =
      run_in(c.op, c.attrs, inputs, c.aux, heads, DType::kFloat32, c.low_inputs, device);
  const Pass lp = run_in(c.op, c.attrs, inputs, c.aux, heads, low, c.low_inputs, device);
  // The visible outputs: hidden ones (RNN's workspace) may be laid out
  // differently by the two types' kernels.
  const auto visible = static_cast<size_t>(op::OpInstance(c.op, c.attrs).num_visible_outputs());
  for (size_t k = 0; k < visible; ++k) {
    CAPTURE(k);
    CHECK(lp.outputs[k].dtype() == (k < c.low_inputs ? low : DType::kFloat32));
    CHECK(relative_error(lp.outputs[k], f32.outputs[k]) <= bound);
  }
  for (size_t k = 0; k < f32.grads.size(); ++k) {
    CAPTURE(k);
    CHECK(relative_error(lp.grads[k], f32.grads[k]) <= bound);
  }
}

// An RNN case (5 steps): inputs from [-1, 1], all in the low precision,
// twice the bounds.
LowCase rnn_case(AttrMap attrs, std::vector<Shape> inputs) {
  LowCase c{"RNN", std::move(attrs), std::move(inputs)};
  c.bound_scale = 2.0;
  return c;
}

std::vector<LowCase> low_precision_cases() {
  const Shape img{2, 8, 6, 6};
  return {
      {"Convolution",
       {{"kernel", "(3, 3)"}, {"num_filter", "16"}, {"pad", "(1, 1)"}},
       {img, Shape{16, 8, 3, 3}, Shape{16}}},
      {"Convolution",
       {{"kernel", "(5, 5)"}, {"num_filter", "20"}, {"no_bias", "True"}},
       {Shape{4, 1, 12, 12}, Shape{20, 1, 5, 5}}},
      {"FullyConnected", {{"num_hidden", "10"}}, {Shape{4, 50}, Shape{10, 50}, Shape{10}}},
      // Every transpose, as the attention products use them (q k^T, then · v).
      {"dot", {}, {Shape{6, 20}, Shape{20, 9}}},
      {"dot", {{"transpose_a", "True"}, {"transpose_b", "True"}}, {Shape{20, 6}, Shape{9, 20}}},
      {"dot", {}, {Shape{2, 3, 16}, Shape{16, 5}}},
      {"batch_dot", {}, {Shape{3, 5, 16}, Shape{3, 16, 7}}},
      {"batch_dot", {{"transpose_b", "True"}}, {Shape{4, 8, 16}, Shape{4, 8, 16}}},
      {"batch_dot", {{"transpose_a", "True"}}, {Shape{2, 16, 5}, Shape{2, 16, 7}}},
      {"batch_dot", {}, {Shape{1, 4, 12}, Shape{1, 12, 3}}},
      // RNN: the x-side products of every step at once, then one h-side
      // product and one cell step per step, in every mode; 16-bit states.
      rnn_case(
          {{"mode", "lstm"}, {"state_size", "8"}, {"num_layers", "2"}, {"state_outputs", "True"}},
          {Shape{5, 3, 6}, Shape{1088}, Shape{2, 3, 8}, Shape{2, 3, 8}}),
      rnn_case(
          {{"mode", "lstm"}, {"state_size", "8"}, {"num_layers", "1"}, {"projection_size", "4"}},
          {Shape{5, 3, 6}, Shape{416}, Shape{1, 3, 4}, Shape{1, 3, 8}}),
      rnn_case(
          {{"mode", "gru"}, {"state_size", "8"}, {"num_layers", "1"}, {"bidirectional", "True"}},
          {Shape{5, 3, 6}, Shape{768}, Shape{2, 3, 8}}),
      rnn_case({{"mode", "rnn_tanh"}, {"state_size", "8"}, {"num_layers", "1"}},
               {Shape{5, 3, 6}, Shape{128}, Shape{1, 3, 8}}),
      {"Activation", {{"act_type", "relu"}}, {img}},
      // bfloat16 data, float32 gamma, beta, statistics and their gradients;
      // with fix_gamma off so that gamma's gradient is compared too.
      {"BatchNorm",
       {{"fix_gamma", "False"}},
       {img, Shape{8}, Shape{8}},
       -1.0,
       1,
       {Shape{8}, Shape{8}}},
      {"BatchNorm", {}, {img, Shape{8}, Shape{8}}, -1.0, 1, {Shape{8}, Shape{8}}},
      {"Activation", {{"act_type", "tanh"}}, {img}},
      {"Activation", {{"act_type", "sigmoid"}}, {img}},
      {"Activation", {{"act_type", "softsign"}}, {img}},
      {"Pooling", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}}, {img}},
      {"Pooling", {{"kernel", "(3, 3)"}, {"pool_type", "avg"}, {"global_pool", "True"}}, {img}},
      {"Flatten", {}, {img}},
      {"Reshape", {{"shape", "(2, -1)"}}, {img}},
      {"Concat", {{"num_args", "2"}, {"dim", "1"}}, {img, img}},
      {"elemwise_add", {}, {img, img}},
      {"elemwise_sub", {}, {img, img}},
      {"elemwise_mul", {}, {img, img}},
      {"elemwise_div", {}, {img, img}, 0.5},
      {"sqrt", {}, {img}, 0.1},
      {"ElementWiseSum", {{"num_args", "3"}}, {img, img, img}},
      {"relu", {}, {img}},
      {"tanh", {}, {img}},
      {"abs", {}, {img}},
      {"square", {}, {img}},
      {"clip", {{"a_min", "-0.5"}, {"a_max", "0.5"}}, {img}},
  };
}

}  // namespace

TEST_CASE("low precision: each operator in bfloat16 against float32") {
  if (!op::dnnl_bf16_available()) {
    MESSAGE("this CPU has no bfloat16 instructions: Convolution and FullyConnected skipped");
  }
  for (const LowCase& c : low_precision_cases()) {
    const op::AmpClass amp =
        op::OpRegistry::get().find(c.op).amp_class(op::OpInstance(c.op, c.attrs).params());
    CHECK(amp != op::AmpClass::kFloat32);
    if (amp == op::AmpClass::kLowPrecision && !op::dnnl_bf16_available()) continue;
    check_low_precision(c);
    // The element-wise ones again on the reference kernels (Pooling has both).
    if (amp != op::AmpClass::kLowPrecision) {
      op::ScopedDnnl reference(false);
      check_low_precision(c);
    }
  }
}

// A bfloat16 tensor read by two products gets its gradient added (req add),
// and an output may be added to: oneDNN's matmul writes into scratch and mx
// adds, in float, rounding once to bfloat16.
TEST_CASE("low precision: dot and batch_dot in bfloat16 add into outputs and gradients") {
  if (!op::dnnl_bf16_available()) {
    MESSAGE("this CPU has no bfloat16 instructions: skipped");
    return;
  }
  std::mt19937_64 rng(5);
  for (const auto& [name, attrs, a_shape, b_shape] :
       {std::tuple{std::string("dot"), AttrMap{{"transpose_b", "True"}}, Shape{6, 20},
                   Shape{9, 20}},
        std::tuple{std::string("batch_dot"), AttrMap{}, Shape{3, 5, 16}, Shape{3, 16, 7}}}) {
    CAPTURE(name);
    op::OpInstance op(name, attrs);
    const std::vector<NDArray> in32{random_f32(a_shape, rng, -1, 1),
                                    random_f32(b_shape, rng, -1, 1)};
    const NDArray y32 = op::invoke(op, in32)[0];
    const NDArray base32 = random_f32(y32.shape(), rng, -1, 1);
    const NDArray head32 = random_f32(y32.shape(), rng, -1, 1);
    const std::vector<NDArray> in{cast_to(in32[0], DType::kBFloat16),
                                  cast_to(in32[1], DType::kBFloat16)};
    // Forward: base + A·B.
    const NDArray y = cast_to(base32, DType::kBFloat16);
    op::invoke_forward(op, in, {}, {y}, {OpReq::kAdd}, true);
    const NDArray want_y = op::invoke("elemwise_add", {base32, y32})[0];
    CHECK(relative_error(y, want_y) <= kBound);
    // Backward: gradient bases plus the float32 gradients.
    std::vector<NDArray> grads32{NDArray::zeros(a_shape), NDArray::zeros(b_shape)};
    op::invoke_backward(op, {head32}, in32, {y32}, {}, grads32, {OpReq::kWrite, OpReq::kWrite});
    std::vector<NDArray> bases32{random_f32(a_shape, rng, -1, 1), random_f32(b_shape, rng, -1, 1)};
    std::vector<NDArray> grads{cast_to(bases32[0], DType::kBFloat16),
                               cast_to(bases32[1], DType::kBFloat16)};
    op::invoke_backward(op, {cast_to(head32, DType::kBFloat16)}, in,
                        {cast_to(y32, DType::kBFloat16)}, {}, grads, {OpReq::kAdd, OpReq::kAdd});
    for (size_t i = 0; i < 2; ++i) {
      CAPTURE(i);
      CHECK(relative_error(grads[i], op::invoke("elemwise_add", {bases32[i], grads32[i]})[0]) <=
            kBound);
    }
  }
}

// Without oneDNN (MX_DNNL=0 here) the CPU has no bfloat16 kernels for the
// low-precision operators: each refuses, naming itself, rather than emulate;
// RNN refuses float16 on the CPU too.
TEST_CASE("low precision: the CPU refuses 16-bit operators it has no kernels for") {
  auto refusal = [](const LowCase& c, DType low) -> std::string {
    std::mt19937_64 rng(3);
    std::vector<NDArray> in;
    for (const Shape& s : c.inputs) in.push_back(cast_to(random_f32(s, rng, -1, 1), low));
    try {  // (a kernel's error surfaces when its output is read)
      for (const NDArray& y : op::invoke(c.op, in, c.attrs)) y.wait_to_read();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  };
  op::ScopedDnnl off(false);
  for (const LowCase& c : low_precision_cases()) {
    if (c.op != "RNN" && c.op != "dot" && c.op != "FullyConnected" && c.op != "Convolution")
      continue;
    CAPTURE(c.op);
    const std::string bf16 = refusal(c, DType::kBFloat16);
    CHECK(bf16.find(c.op + ": bfloat16 needs mx's oneDNN kernels") != std::string::npos);
    if (c.op == "RNN")
      CHECK(refusal(c, DType::kFloat16).find("RNN: float16 runs on a GPU only") !=
            std::string::npos);
  }
}

// On a GPU (test_ops_gpu): every case in float16 and in bfloat16 against
// float32 on the same GPU (whose float32 kernels the harness compares with
// the CPU's), through cuDNN's and cuBLAS's 16-bit kernels with float32 sums
// and the element-wise kernels on 16-bit storage.
TEST_CASE("low precision on the harness device: float16 and bfloat16 against float32") {
  const Context device = harness_device();
  if (!device.is_gpu() || !gpu_present()) {
    MESSAGE("no GPU as the harness device (", device.to_string(),
            "): the CPU's bfloat16 kernels are checked above, float16 runs on GPUs only");
    return;
  }
  for (const LowCase& c : low_precision_cases())
    for (DType low : {DType::kFloat16, DType::kBFloat16}) check_low_precision(c, low, device);
}

TEST_CASE("every operator that may run in bfloat16 has a low-precision case") {
  std::set<std::string> covered;
  for (const LowCase& c : low_precision_cases()) covered.insert(c.op);
  for (const op::OpDef* def : op::OpRegistry::get().list()) {
    REQUIRE(def->amp_class);
    if (def->name == "amp_cast" || def->name == "amp_multicast") continue;
    // Checks of any float type that give a float32 flag (test_ops_all_finite).
    if (def->name == "all_finite" || def->name == "multi_all_finite") continue;
    // The comparisons and logical operators give 0 or 1: nothing to round.
    if (def->name[0] == '_') continue;
    if (def->amp_text == op::amp_class_name(op::AmpClass::kFloat32)) continue;
    INFO(def->name, " runs in bfloat16 under the AMP pass but has no low-precision case");
    CHECK(covered.count(def->name) == 1);
  }
}
