// In inference the oneDNN Convolution and FullyConnected kernels reorder
// their weights once per content (op/dnnl/dnnl_context.h, ContentStamp) and
// keep the result. These tests check that the kept reorder is used, and that
// a write to the weights, through the array or a view of it, or a new array
// at the same address, is never answered from it.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "ndarray/ndarray.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/invoke.h"

#if MX_USE_DNNL
#include "op/dnnl/dnnl_context.h"
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
