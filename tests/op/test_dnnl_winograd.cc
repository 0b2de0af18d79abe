// oneDNN's Winograd convolution runs the 3x3 stride-1 convolutions it wins
// on (op/dnnl/dnnl_descs.h, winograd_wins). These tests check which
// geometries take it, that it really runs there (its sums round differently
// from the direct algorithm's), that its results in every pass stay within
// rounding of the direct algorithm's, and that MX_DNNL_WINOGRAD's switch
// turns it off. The operator harness compares it with the reference kernels
// and MXNet's values (tests/fixtures/ops: conv2d_winograd).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/invoke.h"
#include "op/nn/conv_util.h"

#if MX_USE_DNNL
#include "op/dnnl/dnnl_descs.h"
#endif

using namespace mx;

namespace {

NDArray patterned(const Shape& shape, float phase) {
  std::vector<float> v(static_cast<size_t>(shape.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.61f * static_cast<float>(i) + phase);
  return NDArray::from_vector(shape, std::move(v));
}

// Forward output and the data and weight gradients of one convolution.
struct Passes {
  std::vector<float> y, dx, dw;
};

Passes run_conv(const op::AttrMap& attrs, const NDArray& x, const NDArray& w) {
  const op::OpInstance conv("Convolution", attrs);
  auto y = op::invoke(conv, {x, w}, {}, /*is_train=*/true);
  const NDArray dy = patterned(y[0].shape(), 0.3f);
  NDArray dx = NDArray::zeros(x.shape()), dw = NDArray::zeros(w.shape());
  op::invoke_backward(conv, {dy}, {x, w}, y, {}, {dx, dw}, {op::OpReq::kWrite, op::OpReq::kWrite});
  return {y[0].to_vector<float>(), dx.to_vector<float>(), dw.to_vector<float>()};
}

// x convolved by w (3x3, pad 1, no bias) with Winograd allowed, then not.
struct OnAndOff {
  Passes winograd, direct;
};

OnAndOff run_on_and_off(const NDArray& x, const NDArray& w) {
  const op::ScopedDnnl dnnl_on(true);
  const op::AttrMap attrs{{"kernel", "(3, 3)"},
                          {"num_filter", std::to_string(w.shape()[0])},
                          {"pad", "(1, 1)"},
                          {"no_bias", "True"}};
  OnAndOff runs;
  {
    const op::ScopedWinograd on(true);
    runs.winograd = run_conv(attrs, x, w);
  }
  {
    const op::ScopedWinograd off(false);
    runs.direct = run_conv(attrs, x, w);
  }
  return runs;
}

// The largest difference relative to the largest magnitude.
double relative_gap(const std::vector<float>& a, const std::vector<float>& b) {
  REQUIRE(a.size() == b.size());
  double gap = 0, scale = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    gap = std::max(gap, std::fabs(double(a[i]) - b[i]));
    scale = std::max(scale, std::fabs(double(b[i])));
  }
  return gap / scale;
}

}  // namespace

#if MX_USE_DNNL
TEST_CASE(
    "Winograd's rules: 3x3 stride-1 with channels in 16s; 32 tiles in training, kept weights up to "
    "4 MiB in inference") {
  auto geom = [](int64_t batch, int64_t channels, int64_t size, int64_t filters, int64_t kernel,
                 int64_t stride, int64_t groups = 1) {
    op::ConvGeom g;
    g.batch = batch;
    g.channels = channels;
    g.height = g.width = size;
    g.filters = filters;
    g.groups = groups;
    g.win.kernel = {kernel, kernel};
    g.win.stride = {stride, stride};
    g.win.pad = {kernel / 2, kernel / 2};
    g.out_height = g.out_width = (size + 2 * (kernel / 2) - kernel) / stride + 1;
    return g;
  };
  using op::dnnl_impl::winograd_wins;
  using op::dnnl_impl::winograd_wins_keeping_weights;
  // Shapes oneDNN's Winograd kernels do not take: neither rule picks them.
  auto dilated = geom(32, 64, 32, 64, 3, 1);
  dilated.win.dilate = {2, 2};
  for (const op::ConvGeom& g :
       {geom(32, 64, 32, 64, 3, 2), geom(32, 64, 32, 64, 5, 1), geom(32, 64, 32, 64, 1, 1),
        geom(32, 20, 32, 64, 3, 1), geom(32, 16, 32, 16, 3, 1), geom(32, 64, 32, 64, 3, 1, 2),
        dilated}) {
    CHECK_FALSE(op::dnnl_impl::winograd_geometry(g));
    CHECK_FALSE(winograd_wins(g));
    CHECK_FALSE(winograd_wins_keeping_weights(g));
  }
  // Geometries it takes. Training (weights transformed per call): 32 tiles
  // or more. Inference (weights kept): any tile count, up to 256 channels
  // and filters (the kept weights' memory).
  struct Case {
    op::ConvGeom g;
    bool training, inference;
  };
  for (const Case& c : {Case{geom(32, 64, 32, 64, 3, 1), true, true},  // ResNet-18 CIFAR, batch 32
                        Case{geom(32, 512, 4, 512, 3, 1), true, false},   // its last stage
                        Case{geom(1, 64, 56, 64, 3, 1), true, true},      // ResNet-50, batch 1
                        Case{geom(1, 256, 14, 256, 3, 1), false, true},   // 16 tiles
                        Case{geom(1, 128, 3, 128, 3, 1), false, true},    // 1 tile
                        Case{geom(16, 256, 14, 256, 3, 1), true, true},   // ResNet-50, batch 16
                        Case{geom(16, 512, 7, 512, 3, 1), true, false},   // 9 MiB of direct weights
                        Case{geom(1, 256, 14, 512, 3, 1), false, false},  // 4.5 MiB
                        Case{geom(16, 512, 2, 512, 3, 1), false, false}}) {
    INFO("batch ", c.g.batch, ", ", c.g.channels, " -> ", c.g.filters, " at ", c.g.height);
    CHECK(op::dnnl_impl::winograd_geometry(c.g));
    CHECK(winograd_wins(c.g) == c.training);
    CHECK(winograd_wins_keeping_weights(c.g) == c.inference);
  }

  const op::ScopedWinograd off(false);
  CHECK(op::dnnl_impl::ConvDescs(geom(32, 64, 32, 64, 3, 1)).algorithm ==
        dnnl::algorithm::convolution_direct);
}
#endif

TEST_CASE("Winograd convolution: within rounding of the direct one in every pass, and switchable") {
  if (!op::dnnl_built()) {
    MESSAGE("oneDNN is not built in: no Winograd kernel to check");
    return;
  }
  const NDArray x = patterned(Shape{8, 32, 8, 8}, 0.0f);
  const NDArray w = patterned(Shape{32, 32, 3, 3}, 1.0f) * 0.1f;
  const auto [winograd, direct] = run_on_and_off(x, w);
  const Passes again = run_on_and_off(x, w).winograd;
  // Deterministic: the same algorithm gives the same bits (exact resume).
  CHECK(winograd.y == again.y);
  CHECK(winograd.dx == again.dx);
  CHECK(winograd.dw == again.dw);
  CHECK(relative_gap(winograd.y, direct.y) < 1e-5);
  CHECK(relative_gap(winograd.dx, direct.dx) < 1e-5);
  CHECK(relative_gap(winograd.dw, direct.dw) < 1e-5);
  if (!op::dnnl_winograd_available()) {
    MESSAGE("this CPU has no oneDNN Winograd kernel (AVX-512): only the direct one ran");
    return;
  }
  // A different algorithm ran: its sums round differently.
  CHECK(winograd.y != direct.y);
  CHECK(winograd.dx != direct.dx);
  CHECK(winograd.dw != direct.dw);
}

TEST_CASE("a Winograd pass whose scratch would exceed the budget runs the direct algorithm") {
  if (!op::dnnl_winograd_available()) {
    MESSAGE("no oneDNN Winograd kernel here: nothing to check");
    return;
  }
  // ResNet-18's last stage at batch 32: Winograd's forward scratch is 47
  // MiB, its weights gradient's 85 MiB or more (a copy per thread), over
  // kWinogradScratchBytes (64 MiB).
  const NDArray x = patterned(Shape{32, 512, 4, 4}, 0.0f);
  const NDArray w = patterned(Shape{512, 512, 3, 3}, 1.0f) * 0.02f;
  const auto [winograd, direct] = run_on_and_off(x, w);
  CHECK(winograd.y != direct.y);    // Winograd ran forward
  CHECK(winograd.dw == direct.dw);  // the weights gradient ran direct
  // Sums of 4608 products: rounding reaches a few 1e-5 of the scale.
  CHECK(relative_gap(winograd.y, direct.y) < 1e-4);
  CHECK(relative_gap(winograd.dx, direct.dx) < 1e-4);
}
