// In inference the oneDNN Convolution and FullyConnected kernels reorder
// their weights once per content (op/dnnl/dnnl_context.h, ContentStamp) and
// keep the result; RNN gathers its flat parameter vector into oneDNN's
// layouts once per content and pass, in training too (op/dnnl/dnnl_rnn.h).
// These tests check that the kept reorder is used, and that a write to the
// weights, through the array or a view of it, or a new array at the same
// address, is never answered from it (MXNet's #16037).
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ndarray/ndarray.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/invoke.h"

#if MX_USE_DNNL
#include "op/dnnl/dnnl_context.h"
#include "op/dnnl/dnnl_rnn.h"
#endif

using namespace mx;

namespace {

[[maybe_unused]] std::vector<float> pattern(int64_t n, float scale, float offset) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = scale * std::sin(0.37f * static_cast<float>(i)) + offset;
  return v;
}

// The operator's output with oneDNN and with the reference kernels.
struct Outputs {
  std::vector<float> dnnl, reference;
};

[[maybe_unused]] Outputs run_both(const std::string& op, const op::AttrMap& attrs,
                                  const std::vector<NDArray>& inputs) {
  Outputs out;
  {
    op::ScopedDnnl on(true);
    out.dnnl = op::invoke(op, inputs, attrs)[0].to_vector<float>();
  }
  {
    op::ScopedDnnl off(false);
    out.reference = op::invoke(op, inputs, attrs)[0].to_vector<float>();
  }
  return out;
}

[[maybe_unused]] void check_same(const Outputs& o) {
  REQUIRE(o.dnnl.size() == o.reference.size());
  for (size_t i = 0; i < o.dnnl.size(); ++i)
    REQUIRE(o.dnnl[i] == doctest::Approx(o.reference[i]).epsilon(1e-4));
}

#if MX_USE_DNNL
uint64_t reorders() { return op::dnnl_impl::stamped_reorders_made(); }
#endif

// `blocked`: oneDNN takes the weights in a layout of its own, rather than
// mx's row-major one.
void check_weight_writes(const std::string& op, const op::AttrMap& attrs, const Shape& data_shape,
                         const Shape& weight_shape, const Shape& bias_shape, bool blocked) {
#if MX_USE_DNNL
  NDArray x = NDArray::from_vector(data_shape, pattern(data_shape.size(), 1.0f, 0.0f));
  NDArray b = NDArray::from_vector(bias_shape, pattern(bias_shape.size(), 0.1f, 0.0f));
  auto w = NDArray::from_vector(weight_shape, pattern(weight_shape.size(), 0.2f, 0.05f));

  const uint64_t before = reorders();
  const Outputs first = run_both(op, attrs, {x, w, b});
  check_same(first);
  const uint64_t after_first = reorders();
  // A blocked layout is reordered into the cache by the first call ...
  CHECK(after_first == before + (blocked ? 1 : 0));
  // ... and a second call with the same weights reorders nothing.
  check_same(run_both(op, attrs, {x, w, b}));
  CHECK(reorders() == after_first);

  SUBCASE("a write to the weights") {
    w.fill(0.25);
    const Outputs o = run_both(op, attrs, {x, w, b});
    check_same(o);
    CHECK(o.dnnl != first.dnnl);
  }
  SUBCASE("a write through a view of the weights") {
    NDArray view = w.reshape(Shape{weight_shape.size()});
    view.fill(-0.5);
    const Outputs o = run_both(op, attrs, {x, w, b});
    check_same(o);
    CHECK(o.dnnl != first.dnnl);
  }
  SUBCASE("new weights, perhaps at the same address") {
    w = NDArray();  // back to the storage pool
    NDArray w2 = NDArray::from_vector(weight_shape, pattern(weight_shape.size(), 0.3f, -0.1f));
    const Outputs o = run_both(op, attrs, {x, w2, b});
    check_same(o);
    CHECK(o.dnnl != first.dnnl);
  }
#else
  (void)op, (void)attrs, (void)data_shape, (void)weight_shape, (void)bias_shape, (void)blocked;
  MESSAGE("built without oneDNN: nothing to check");
#endif
}

}  // namespace

TEST_CASE("inference Convolution reorders its weights once per content") {
  check_weight_writes("Convolution", {{"kernel", "(3,3)"}, {"num_filter", "32"}, {"pad", "(1,1)"}},
                      Shape{2, 16, 8, 8}, Shape{32, 16, 3, 3}, Shape{32}, true);
}

TEST_CASE("inference FullyConnected reorders its weights once per content") {
  // Its brgemm kernel (AVX-512) takes blocked weights; the GEMM-based one
  // of older CPUs takes them as they are.
#if MX_USE_DNNL
  const bool blocked = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
#else
  const bool blocked = false;
#endif
  check_weight_writes("FullyConnected", {{"num_hidden", "48"}}, Shape{4, 40}, Shape{48, 40},
                      Shape{48}, blocked);
}

#if MX_USE_DNNL
namespace {

uint64_t rnn_packs() { return op::dnnl_impl::rnn_weight_packs_made(); }

// The RNN's outputs (output, final states) on both implementations.
struct RnnRun {
  std::vector<float> dnnl, reference;
};
RnnRun run_rnn(const op::OpInstance& rnn, const std::vector<NDArray>& inputs, bool is_train) {
  auto flat = [](const std::vector<NDArray>& outs) {
    std::vector<float> all = outs[0].to_vector<float>();
    for (float v : outs[1].to_vector<float>()) all.push_back(v);
    return all;
  };
  RnnRun r;
  {
    op::ScopedDnnl on(true);
    r.dnnl = flat(op::invoke(rnn, inputs, {}, is_train));
  }
  op::ScopedDnnl off(false);
  r.reference = flat(op::invoke(rnn, inputs, {}, is_train));
  return r;
}

void check_same(const RnnRun& r) { check_same(Outputs{r.dnnl, r.reference}); }

}  // namespace
#endif

TEST_CASE("RNN gathers its weights for oneDNN once per content, and sees every write") {
#if MX_USE_DNNL
  // Input size 4, state 8: layer 0 runs alone, layers 1-2 in one primitive.
  const op::AttrMap attrs{
      {"mode", "gru"}, {"state_size", "8"}, {"num_layers", "3"}, {"state_outputs", "True"}};
  const op::OpInstance rnn("RNN", attrs);
  const int64_t count = op::RnnParam::from_strings(attrs, "RNN").parameter_count(4);
  NDArray x = NDArray::from_vector(Shape{5, 2, 4}, pattern(40, 1.0f, 0.0f));
  NDArray w = NDArray::from_vector(Shape{count}, pattern(count, 0.3f, 0.02f));
  NDArray h = NDArray::from_vector(Shape{3, 2, 8}, pattern(48, 0.5f, 0.0f));

  const uint64_t before = rnn_packs();
  const RnnRun first = run_rnn(rnn, {x, w, h}, false);
  check_same(first);
  CHECK(rnn_packs() == before + 2);  // one per primitive
  check_same(run_rnn(rnn, {x, w, h}, false));
  CHECK(rnn_packs() == before + 2);
  // Training packs the layouts of its own primitives, once too.
  check_same(run_rnn(rnn, {x, w, h}, true));
  check_same(run_rnn(rnn, {x, w, h}, true));
  const uint64_t trained = rnn_packs();
  CHECK(trained == before + 4);

  SUBCASE("a write to the parameters") {
    w.fill(0.05);
    const RnnRun r = run_rnn(rnn, {x, w, h}, false);
    check_same(r);
    CHECK(r.dnnl != first.dnnl);
    CHECK(rnn_packs() == trained + 2);
  }
  SUBCASE("a write through a view of the parameters") {
    NDArray view = w.reshape(Shape{count / 2, 2});
    view.fill(-0.05);
    const RnnRun r = run_rnn(rnn, {x, w, h}, true);
    check_same(r);
    CHECK(r.dnnl != first.dnnl);
  }
  SUBCASE("new parameters, perhaps at the same address") {
    w = NDArray();
    NDArray w2 = NDArray::from_vector(Shape{count}, pattern(count, 0.2f, -0.01f));
    const RnnRun r = run_rnn(rnn, {x, w2, h}, false);
    check_same(r);
    CHECK(r.dnnl != first.dnnl);
  }
#else
  MESSAGE("built without oneDNN: nothing to check");
#endif
}

TEST_CASE("RNN leaves sequence lengths and cell clipping to the reference kernels") {
#if MX_USE_DNNL
  op::AttrMap attrs{{"mode", "lstm"}, {"state_size", "4"}, {"num_layers", "1"}};
  const int64_t count = op::RnnParam::from_strings(attrs, "RNN").parameter_count(3);
  const std::vector<NDArray> inputs{NDArray::from_vector(Shape{3, 2, 3}, pattern(18, 1.0f, 0.0f)),
                                    NDArray::from_vector(Shape{count}, pattern(count, 0.3f, 0.0f)),
                                    NDArray::zeros(Shape{1, 2, 4}), NDArray::zeros(Shape{1, 2, 4})};
  op::ScopedDnnl on(true);
  uint64_t before = rnn_packs();
  auto run = [&](const std::vector<NDArray>& in) {
    return op::invoke(op::OpInstance("RNN", attrs), in)[0].to_vector<float>();  // waits
  };
  run(inputs);
  CHECK(rnn_packs() == before + 1);  // oneDNN takes the plain case
  attrs["lstm_state_clip_min"] = "-1";
  attrs["lstm_state_clip_max"] = "1";
  before = rnn_packs();
  run(inputs);
  CHECK(rnn_packs() == before);
  attrs.erase("lstm_state_clip_min");
  attrs.erase("lstm_state_clip_max");
  attrs["use_sequence_length"] = "True";
  std::vector<NDArray> with_lengths = inputs;
  with_lengths.push_back(NDArray::from_vector<float>(Shape{2}, {3, 1}));
  run(with_lengths);
  CHECK(rnn_packs() == before);
#else
  MESSAGE("built without oneDNN: nothing to check");
#endif
}
