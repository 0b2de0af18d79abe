// The nn operator family: Convolution, Deconvolution, Pooling, BatchNorm,
// LRN, Dropout, LeakyReLU, Embedding. Finite-difference gradients, MXNet
// 1.9.1 reference values (tests/fixtures/ops/nn.*), shape inference and its
// messages, and properties the fixtures cannot pin down (Dropout's
// randomness, the transpose relation of Deconvolution and Convolution, the
// blocked and threaded convolution paths against a direct loop).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>

#include "base/error.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/resources.h"
#include "op_harness.h"

using namespace mx;
using namespace mx::test;
using op::AttrMap;
using op::OpInstance;
using op::OpReq;
using op::ShapeVector;

namespace {

std::vector<double> values(const NDArray& a) {
  if (a.dtype() == DType::kFloat64) return a.to_vector<double>();
  auto f = a.to_vector<float>();
  return {f.begin(), f.end()};
}

NDArray random_array(const Shape& shape, uint64_t seed, double low = -1, double high = 1) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(low, high);
  std::vector<double> v(static_cast<size_t>(shape.size()));
  for (auto& x : v) x = u(rng);
  return NDArray::from_vector<double>(shape, v);
}

double dot(const NDArray& a, const NDArray& b) {
  auto x = values(a), y = values(b);
  REQUIRE(x.size() == y.size());
  return std::inner_product(x.begin(), x.end(), y.begin(), 0.0);
}

// Shape inference of `op` from the given input shapes; returns the outputs.
ShapeVector infer(const std::string& op, const AttrMap& attrs, ShapeVector& in,
                  ShapeVector aux = {}) {
  OpInstance inst(op, attrs, op + " 'layer'");
  if (aux.empty()) aux.resize(inst.aux_names().size());
  ShapeVector out(inst.output_names().size());
  inst.infer_shape(in, aux, out);
  return out;
}

}  // namespace

// ---------------------------------------------------------------- gradients

TEST_CASE("gradients: Convolution 1-D and 2-D, strides, pads, dilations, groups") {
  check_gradient("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "3"}},
                 {Shape{2, 2, 5, 5}, Shape{3, 2, 3, 3}, Shape{3}});
  check_gradient(
      "Convolution",
      {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}},
      {Shape{2, 3, 6, 5}, Shape{2, 3, 3, 3}, Shape{2}});
  check_gradient("Convolution",
                 {{"kernel", "(2, 3)"},
                  {"num_filter", "2"},
                  {"dilate", "(2, 1)"},
                  {"pad", "(1, 2)"},
                  {"no_bias", "True"}},
                 {Shape{1, 2, 5, 4}, Shape{2, 2, 2, 3}});
  check_gradient("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"num_group", "2"}},
                 {Shape{2, 4, 4, 4}, Shape{4, 2, 3, 3}, Shape{4}});
  // Depthwise: one filter per channel.
  check_gradient("Convolution",
                 {{"kernel", "(3, 3)"}, {"num_filter", "3"}, {"num_group", "3"}, {"pad", "(1, 1)"}},
                 {Shape{2, 3, 4, 4}, Shape{3, 1, 3, 3}, Shape{3}});
  check_gradient("Convolution",
                 {{"kernel", "(3,)"}, {"num_filter", "2"}, {"stride", "(2,)"}, {"pad", "(1,)"}},
                 {Shape{2, 3, 7}, Shape{2, 3, 3}, Shape{2}});
  check_gradient("Convolution",
                 {{"kernel", "(2,)"}, {"num_filter", "4"}, {"dilate", "(3,)"}, {"num_group", "2"}},
                 {Shape{2, 2, 8}, Shape{4, 1, 2}, Shape{4}});
  // Many small images: several images per GEMM block and per thread.
  GradientCheckOptions some;
  some.max_checks_per_input = 40;
  check_gradient("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "3"}},
                 {Shape{7, 2, 4, 4}, Shape{3, 2, 3, 3}, Shape{3}}, some);
  // oneDNN runs this one with the Winograd algorithm (32 channels, 32 tiles
  // of 4x4: op/dnnl/dnnl_descs.h), which check_implementations compares
  // with the reference kernels in every pass.
  check_gradient("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "32"}, {"pad", "(1, 1)"}},
                 {Shape{8, 32, 8, 8}, Shape{32, 32, 3, 3}, Shape{32}}, some);
}

TEST_CASE("gradients: Deconvolution 1-D and 2-D, adj, target_shape, groups, dilations") {
  check_gradient("Deconvolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}},
                 {Shape{2, 3, 3, 3}, Shape{3, 2, 3, 3}});
  check_gradient("Deconvolution",
                 {{"kernel", "(3, 3)"},
                  {"num_filter", "3"},
                  {"stride", "(2, 2)"},
                  {"pad", "(1, 1)"},
                  {"adj", "(1, 0)"},
                  {"no_bias", "False"}},
                 {Shape{2, 2, 3, 3}, Shape{2, 3, 3, 3}, Shape{3}});
  check_gradient(
      "Deconvolution",
      {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"stride", "(2, 2)"}, {"target_shape", "(6, 5)"}},
      {Shape{1, 2, 3, 3}, Shape{2, 2, 3, 3}});
  check_gradient(
      "Deconvolution",
      {{"kernel", "(2, 2)"}, {"num_filter", "4"}, {"num_group", "2"}, {"dilate", "(2, 2)"}},
      {Shape{2, 4, 3, 3}, Shape{4, 2, 2, 2}});
  check_gradient(
      "Deconvolution",
      {{"kernel", "(3,)"}, {"num_filter", "2"}, {"stride", "(2,)"}, {"no_bias", "False"}},
      {Shape{2, 3, 4}, Shape{3, 2, 3}, Shape{2}});
}

TEST_CASE("gradients: Pooling types, conventions, padding, global, 1-D") {
  GradientCheckOptions o;
  o.max_checks_per_input = 60;
  for (const char* type : {"max", "avg", "sum"}) {
    CAPTURE(type);
    check_gradient("Pooling", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", type}},
                   {Shape{2, 2, 4, 5}}, o);
    check_gradient("Pooling",
                   {{"kernel", "(3, 3)"},
                    {"stride", "(2, 2)"},
                    {"pad", "(1, 1)"},
                    {"pool_type", type},
                    {"pooling_convention", "full"}},
                   {Shape{1, 2, 6, 6}}, o);
    check_gradient("Pooling", {{"global_pool", "True"}, {"pool_type", type}}, {Shape{2, 3, 3, 4}},
                   o);
    check_gradient("Pooling",
                   {{"kernel", "(3,)"}, {"stride", "(2,)"}, {"pad", "(1,)"}, {"pool_type", type}},
                   {Shape{2, 2, 7}}, o);
  }
  for (const char* include : {"True", "False"})
    check_gradient("Pooling",
                   {{"kernel", "(2, 2)"},
                    {"stride", "(2, 2)"},
                    {"pad", "(1, 1)"},
                    {"pool_type", "avg"},
                    {"pooling_convention", "full"},
                    {"count_include_pad", include}},
                   {Shape{1, 2, 5, 5}}, o);
  check_gradient("Pooling", {{"kernel", "(2, 2)"}}, {Shape{1, 2, 4, 4}}, o);  // stride 1
}

TEST_CASE("gradients: BatchNorm in training, with global statistics, fix_gamma, axis") {
  GradientCheckOptions train;
  train.aux_shapes = {Shape{3}, Shape{3}};
  train.rtol = 1e-4;
  check_gradient("BatchNorm", {{"fix_gamma", "False"}}, {Shape{4, 3, 2, 2}, Shape{3}, Shape{3}},
                 train);
  check_gradient("BatchNorm", {}, {Shape{4, 3, 2, 2}, Shape{3}, Shape{3}}, train);  // fix_gamma
  check_gradient("BatchNorm", {{"fix_gamma", "False"}, {"eps", "1e-5"}},
                 {Shape{6, 3}, Shape{3}, Shape{3}}, train);
  check_gradient("BatchNorm", {{"fix_gamma", "False"}, {"axis", "-1"}},
                 {Shape{3, 2, 3}, Shape{3}, Shape{3}}, train);
  // Planes of 32 elements or more: the GPU writes them plane by plane, and
  // 1600 take several blocks per plane.
  GradientCheckOptions planes = train;
  planes.max_checks_per_input = 20;
  check_gradient("BatchNorm", {{"fix_gamma", "False"}}, {Shape{2, 3, 40, 40}, Shape{3}, Shape{3}},
                 planes);
  planes.aux_shapes = {Shape{2}, Shape{2}};
  check_gradient("BatchNorm", {{"fix_gamma", "False"}}, {Shape{3, 2, 7, 7}, Shape{2}, Shape{2}},
                 planes);
  // The moving statistics are used at inference and with use_global_stats.
  GradientCheckOptions global = train;
  global.aux_value = 0.7;
  for (bool is_train : {true, false}) {
    global.is_train = is_train;
    check_gradient("BatchNorm", {{"fix_gamma", "False"}, {"use_global_stats", "True"}},
                   {Shape{4, 3, 2, 2}, Shape{3}, Shape{3}}, global);
  }
}

TEST_CASE("gradients: LRN") {
  check_gradient("LRN", {{"nsize", "3"}, {"alpha", "0.5"}}, {Shape{2, 5, 2, 3}});
  check_gradient("LRN", {{"nsize", "5"}, {"alpha", "0.3"}, {"beta", "0.6"}, {"knorm", "1.5"}},
                 {Shape{1, 6, 3, 2}});
  check_gradient("LRN", {{"nsize", "4"}, {"alpha", "0.3"}}, {Shape{1, 5, 2, 2}});
}

TEST_CASE("gradients: Dropout in training (a seeded mask) and at inference") {
  GradientCheckOptions train;
  check_gradient("Dropout", {{"p", "0.4"}}, {Shape{4, 6}}, train);
  check_gradient("Dropout", {{"p", "0.5"}, {"axes", "(1,)"}}, {Shape{3, 4, 5}}, train);
  GradientCheckOptions infer;
  infer.is_train = false;
  check_gradient("Dropout", {{"p", "0.5"}}, {Shape{4, 6}}, infer);
  check_gradient("Dropout", {{"p", "0.5"}, {"mode", "always"}}, {Shape{4, 6}}, infer);
}

TEST_CASE("gradients: LeakyReLU types") {
  GradientCheckOptions away;
  away.min_abs = 0.05;
  away.low = -2;
  away.high = 2;
  check_gradient("LeakyReLU", {}, {Shape{3, 7}}, away);
  check_gradient("LeakyReLU", {{"act_type", "leaky"}, {"slope", "0.1"}}, {Shape{3, 7}}, away);
  check_gradient("LeakyReLU", {{"act_type", "elu"}, {"slope", "0.7"}}, {Shape{3, 7}}, away);
  check_gradient("LeakyReLU", {{"act_type", "selu"}}, {Shape{3, 7}}, away);
  check_gradient("LeakyReLU", {{"act_type", "gelu"}}, {Shape{3, 7}}, away);
  check_gradient("LeakyReLU", {{"act_type", "prelu"}}, {Shape{2, 3, 2, 2}, Shape{3}}, away);
  check_gradient("LeakyReLU", {{"act_type", "prelu"}}, {Shape{4, 5}, Shape{5}}, away);
  check_gradient("LeakyReLU", {{"act_type", "prelu"}}, {Shape{2, 3, 4}, Shape{1}}, away);
}

TEST_CASE("gradients: Embedding (weight only)") {
  GradientCheckOptions o;
  o.integer_inputs = {0};
  o.skip_inputs = {0};
  o.integer_range = 6;
  check_gradient("Embedding", {{"input_dim", "6"}, {"output_dim", "3"}, {"dtype", "float64"}},
                 {Shape{2, 5}, Shape{6, 3}}, o);
}

// ---------------------------------------------------------------- MXNet 1.9.1

namespace {

// The moving statistics after a training step as MXNet leaves them (checked
// against MXNet by scripts/fixtures/op_cases/nn.py): moving * momentum +
// batch * (1 - momentum), with the biased batch variance. MXNet moves them
// in its backward pass, after the fixture recorded them; mx in the forward.
void expect_moving_stats(ReferenceCase& c) {
  const double momentum = c.attrs.count("momentum") ? std::stod(c.attrs.at("momentum")) : 0.9;
  const Shape& s = c.inputs[0].shape();
  int axis = c.attrs.count("axis") ? std::stoi(c.attrs.at("axis")) : 1;
  if (axis < 0) axis += s.ndim();
  const int64_t channels = s[axis], inner = s.prod(axis + 1, s.ndim());
  const int64_t count = s.size() / channels;
  auto x = values(c.inputs[0]);
  std::vector<double> mean(static_cast<size_t>(channels)), var(mean.size());
  for (size_t i = 0; i < x.size(); ++i)
    mean[static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels)] += x[i];
  for (auto& m : mean) m /= static_cast<double>(count);
  for (size_t i = 0; i < x.size(); ++i) {
    const size_t ch = static_cast<size_t>((static_cast<int64_t>(i) / inner) % channels);
    var[ch] += (x[i] - mean[ch]) * (x[i] - mean[ch]);
  }
  for (auto& v : var) v /= static_cast<double>(count);
  std::vector<double> batch[2] = {mean, var};
  for (size_t k = 0; k < 2; ++k) {
    auto before = values(c.aux[k]);
    std::vector<double> after(before.size());
    for (size_t ch = 0; ch < after.size(); ++ch)
      after[ch] = before[ch] * momentum + batch[k][ch] * (1 - momentum);
    if (c.aux[k].dtype() == DType::kFloat64) {
      c.aux_after[k] = NDArray::from_vector<double>(c.aux[k].shape(), after);
    } else {
      c.aux_after[k] = NDArray::from_vector<float>(c.aux[k].shape(),
                                                   std::vector<float>(after.begin(), after.end()));
    }
  }
}

}  // namespace

TEST_CASE("reference: nn operators against MXNet 1.9.1") {
  auto cases = load_reference_cases("nn");
  CHECK(cases.size() >= 50);
  int batch_norm_train = 0, target_variants = 0;
  for (auto c : cases) {
    if (c.op == "BatchNorm" && c.is_train && c.attrs.count("use_global_stats") == 0) {
      REQUIRE(c.aux_after.size() == 2);
      expect_moving_stats(c);
      ++batch_norm_train;
    }
    // oneDNN's Winograd algorithm rounds more than a direct sum: its
    // transforms add and subtract partial sums before multiplying.
    check_reference(c, 1e-4, c.id == "conv2d_winograd" ? 5e-5 : 1e-5);
    if (c.id.rfind("deconv2d_target", 0) == 0) {
      // The same case with target_shape instead of the explicit pad and adj.
      ReferenceCase t = c;
      t.attrs.erase("pad");
      t.attrs.erase("adj");
      const Shape& y = c.outputs[0].shape();
      t.attrs["target_shape"] = Shape{y[2], y[3]}.to_string();
      check_reference(t);
      ++target_variants;
    }
  }
  CHECK(batch_norm_train >= 6);
  CHECK(target_variants == 2);
  // Tied maxima are among them (the gradient checks' random data has none).
  CHECK(std::count_if(cases.begin(), cases.end(), [](const ReferenceCase& c) {
          return c.id.rfind("pool_max_ties", 0) == 0;
        }) == 4);
}

TEST_CASE("max pooling sends each window's gradient to its first maximum only, as MXNet") {
  // Overlapping 2x2 windows, stride 1, over a plane of equal values: every
  // window's gradient goes to its top-left element.
  NDArray x = NDArray::full({1, 1, 3, 3}, 2.0, Context::cpu(), DType::kFloat64);
  OpInstance pool("Pooling", {{"kernel", "(2, 2)"}, {"stride", "(1, 1)"}, {"pool_type", "max"}});
  auto y = op::invoke(pool, {x});
  NDArray dy = NDArray::from_vector<double>({1, 1, 2, 2}, {1, 10, 100, 1000});
  NDArray dx = NDArray::full({1, 1, 3, 3}, 7.0, Context::cpu(), DType::kFloat64);
  op::invoke_backward(pool, {dy}, {x}, y, {}, {dx}, {OpReq::kWrite});
  CHECK(dx.to_vector<double>() == std::vector<double>{1, 10, 0, 100, 1000, 0, 0, 0, 0});
  // A tie between the second and last element of a window: the second wins.
  NDArray t = NDArray::from_vector<double>({1, 1, 2, 2}, {0, 5, 1, 5});
  OpInstance whole("Pooling", {{"kernel", "(2, 2)"}, {"pool_type", "max"}});
  auto ty = op::invoke(whole, {t});
  NDArray tdx = NDArray::zeros({1, 1, 2, 2}, Context::cpu(), DType::kFloat64);
  op::invoke_backward(whole, {NDArray::full({1, 1, 1, 1}, 3.0, Context::cpu(), DType::kFloat64)},
                      {t}, ty, {}, {tdx}, {OpReq::kWrite});
  CHECK(tdx.to_vector<double>() == std::vector<double>{0, 3, 0, 0});
}

// ---------------------------------------------------------------- properties

namespace {

// Direct convolution in double, for comparison with the im2col/GEMM engine.
std::vector<double> direct_conv(const std::vector<double>& x, const Shape& xs,
                                const std::vector<double>& w, const Shape& ws, int64_t groups,
                                int64_t stride, int64_t pad, int64_t dilate, const Shape& ys) {
  std::vector<double> y(static_cast<size_t>(ys.size()), 0.0);
  const int64_t cg = xs[1] / groups, fg = ws[0] / groups;
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t f = 0; f < ys[1]; ++f)
      for (int64_t oh = 0; oh < ys[2]; ++oh)
        for (int64_t ow = 0; ow < ys[3]; ++ow) {
          double sum = 0;
          const int64_t g = f / fg;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t ki = 0; ki < ws[2]; ++ki)
              for (int64_t kj = 0; kj < ws[3]; ++kj) {
                const int64_t ih = oh * stride - pad + ki * dilate;
                const int64_t iw = ow * stride - pad + kj * dilate;
                if (ih < 0 || iw < 0 || ih >= xs[2] || iw >= xs[3]) continue;
                sum +=
                    x[static_cast<size_t>(((n * xs[1] + g * cg + c) * xs[2] + ih) * xs[3] + iw)] *
                    w[static_cast<size_t>(((f * cg + c) * ws[2] + ki) * ws[3] + kj)];
              }
          y[static_cast<size_t>(((n * ys[1] + f) * ys[2] + oh) * ys[3] + ow)] = sum;
        }
  return y;
}

}  // namespace

namespace {

// Forward against direct_conv, and the gradients as adjoints:
// <dy, conv(u, w)> = <grad x, u> and <dy, conv(x, u)> = <grad w, u>.
void check_conv_engine(const Shape& xs, int64_t filters, int64_t k, int64_t groups, int64_t stride,
                       int64_t pad, int64_t dilate, const std::string& workspace = "1024") {
  CAPTURE(xs);
  const Shape ws{filters, xs[1] / groups, k, k};
  AttrMap attrs{{"kernel", Shape{k, k}.to_string()},
                {"num_filter", std::to_string(filters)},
                {"num_group", std::to_string(groups)},
                {"stride", Shape{stride, stride}.to_string()},
                {"pad", Shape{pad, pad}.to_string()},
                {"dilate", Shape{dilate, dilate}.to_string()},
                {"workspace", workspace}};
  NDArray x = random_array(xs, 1), w = random_array(ws, 2), b = random_array({filters}, 3);
  auto y = op::invoke("Convolution", {x, w, b}, attrs);
  const Shape& ys = y[0].shape();
  auto expected = direct_conv(values(x), xs, values(w), ws, groups, stride, pad, dilate, ys);
  auto bias = values(b);
  const int64_t plane = ys[2] * ys[3];
  for (size_t i = 0; i < expected.size(); ++i)
    expected[i] += bias[static_cast<size_t>((static_cast<int64_t>(i) / plane) % filters)];
  CHECK(closeness(y[0], NDArray::from_vector<double>(ys, expected), 1e-12, 1e-12) <= 1);

  NDArray dy = random_array(ys, 4);
  NDArray gx = NDArray::zeros(xs, Context::cpu(), DType::kFloat64);
  NDArray gw = NDArray::zeros(ws, Context::cpu(), DType::kFloat64);
  NDArray gb = NDArray::zeros({filters}, Context::cpu(), DType::kFloat64);
  OpInstance conv("Convolution", attrs);
  op::invoke_backward(conv, {dy}, {x, w, b}, y, {}, {gx, gw, gb},
                      {OpReq::kWrite, OpReq::kWrite, OpReq::kWrite});
  NDArray zero_b = NDArray::zeros({filters}, Context::cpu(), DType::kFloat64);
  NDArray ux = random_array(xs, 5), uw = random_array(ws, 6);
  auto conv_x = op::invoke("Convolution", {ux, w, zero_b}, attrs);
  auto conv_w = op::invoke("Convolution", {x, uw, zero_b}, attrs);
  CHECK(dot(dy, conv_x[0]) == doctest::Approx(dot(gx, ux)).epsilon(1e-12));
  CHECK(dot(dy, conv_w[0]) == doctest::Approx(dot(gw, uw)).epsilon(1e-12));
  auto db = values(gb), dyv = values(dy);
  for (int64_t f = 0; f < filters; ++f) {
    double sum = 0;
    for (int64_t n = 0; n < ys[0]; ++n)
      for (int64_t p = 0; p < plane; ++p)
        sum += dyv[static_cast<size_t>((n * filters + f) * plane + p)];
    CHECK(db[static_cast<size_t>(f)] == doctest::Approx(sum).epsilon(1e-12));
  }

  // kAdd accumulates into what is there.
  NDArray acc = NDArray::full(ys, 1.0, Context::cpu(), DType::kFloat64);
  op::invoke_forward(conv, {x, w, b}, {}, {acc}, {OpReq::kAdd}, false);
  auto got = values(acc), once = values(y[0]);
  for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == doctest::Approx(once[i] + 1));
  NDArray gx2 = gx.copy(), gw2 = gw.copy();
  op::invoke_backward(conv, {dy}, {x, w, b}, y, {}, {gx2, gw2, NDArray()},
                      {OpReq::kAdd, OpReq::kAdd, OpReq::kNull});
  auto twice_w = values(gw2), single_w = values(gw);
  for (size_t i = 0; i < twice_w.size(); ++i)
    REQUIRE(twice_w[i] == doctest::Approx(2 * single_w[i]));
  auto twice_x = values(gx2), single_x = values(gx);
  for (size_t i = 0; i < twice_x.size(); ++i)
    REQUIRE(twice_x[i] == doctest::Approx(2 * single_x[i]));
}

}  // namespace

TEST_CASE("Convolution: the blocked, threaded GEMM engine equals a direct convolution") {
  // Many small images: several images per block, the batch split over
  // threads with per-thread weight gradients summed at the end.
  check_conv_engine({9, 4, 5, 5}, 6, 3, 2, 2, 1, 1);
  // One large image: the GEMMs are split instead, the image cut into bands
  // of output rows whose data gradients overlap.
  check_conv_engine({1, 2, 40, 40}, 3, 3, 1, 1, 1, 1);
  // Bands in several images, dilated.
  check_conv_engine({3, 2, 40, 37}, 4, 3, 2, 1, 2, 2);
  // A small workspace (1 MB) forces narrower bands.
  check_conv_engine({2, 16, 48, 48}, 4, 3, 1, 1, 1, 1, "0");
}

TEST_CASE("Convolution: float32 matches float64 on a layer with many images") {
  const Shape xs{6, 8, 8, 8}, ws{16, 8, 3, 3};
  AttrMap attrs{{"kernel", "(3, 3)"}, {"num_filter", "16"}, {"pad", "(1, 1)"}, {"no_bias", "True"}};
  NDArray x = random_array(xs, 11), w = random_array(ws, 12);
  auto y64 = op::invoke("Convolution", {x, w}, attrs);
  auto to32 = [](const NDArray& a) {
    auto v = a.to_vector<double>();
    return NDArray::from_vector<float>(a.shape(), std::vector<float>(v.begin(), v.end()));
  };
  auto y32 = op::invoke("Convolution", {to32(x), to32(w)}, attrs);
  CHECK(y32[0].dtype() == DType::kFloat32);
  CHECK(closeness(y32[0], y64[0], 1e-5, 1e-5) <= 1);
}

TEST_CASE("Deconvolution is the transpose of Convolution (dilated, strided, grouped)") {
  struct Case {
    AttrMap conv;
    Shape x, w;
  };
  const Case cases[] = {
      {{{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"dilate", "(2, 2)"}, {"pad", "(1, 2)"}},
       Shape{2, 3, 7, 8},
       Shape{4, 3, 3, 3}},
      {{{"kernel", "(3, 2)"},
        {"num_filter", "4"},
        {"stride", "(2, 3)"},
        {"num_group", "2"},
        {"dilate", "(1, 2)"}},
       Shape{2, 2, 9, 10},
       Shape{4, 1, 3, 2}},
      {{{"kernel", "(3,)"},
        {"num_filter", "2"},
        {"stride", "(2,)"},
        {"dilate", "(2,)"},
        {"pad", "(1,)"}},
       Shape{3, 3, 11},
       Shape{2, 3, 3}},
  };
  for (const auto& tc : cases) {
    AttrMap conv = tc.conv;
    conv["no_bias"] = "True";
    NDArray x = random_array(tc.x, 21), w = random_array(tc.w, 22);
    auto y = op::invoke("Convolution", {x, w}, conv);
    NDArray u = random_array(y[0].shape(), 23);
    // Deconvolution with the same window maps y's shape back to x's; adj
    // restores the rows and columns the strided convolution did not reach.
    AttrMap deconv = conv;
    deconv["num_filter"] = std::to_string(tc.x[1]);
    const int nd = tc.x.ndim() - 2;
    auto param = [&](const char* name, int64_t fallback) {
      Shape s = conv.count(name) ? Shape::parse(conv.at(name)) : Shape::filled(nd, fallback);
      return s;
    };
    const Shape kernel = param("kernel", 1), stride = param("stride", 1),
                dilate = param("dilate", 1), pad = param("pad", 0);
    Shape adj = Shape::filled(nd, 0);
    for (int d = 0; d < nd; ++d)
      adj[d] = (tc.x[2 + d] + 2 * pad[d] - (kernel[d] - 1) * dilate[d] - 1) % stride[d];
    deconv["adj"] = adj.to_string();
    auto back = op::invoke("Deconvolution", {u, w}, deconv);
    REQUIRE(back[0].shape() == tc.x);
    CHECK(dot(u, y[0]) == doctest::Approx(dot(back[0], x)).epsilon(1e-12));
  }
}

TEST_CASE("Dropout: statistics, scaling, mask and output agree, axes, modes, seeds") {
  const Shape s{200, 500};
  NDArray x = random_array(s, 31, 0.5, 1.5);  // no zeros: a dropped element is exactly 0
  OpInstance drop("Dropout", {{"p", "0.3"}});
  op::ResourceManager::get().seed(42);
  auto out = op::invoke(drop, {x}, {}, true);
  auto xv = values(x), yv = values(out[0]), mv = values(out[1]);
  REQUIRE(out[1].shape() == s);
  int64_t kept = 0;
  for (size_t i = 0; i < yv.size(); ++i) {
    if (yv[i] != 0) {
      ++kept;
      REQUIRE(yv[i] == doctest::Approx(xv[i] / 0.7));
      REQUIRE(mv[i] == doctest::Approx(1 / 0.7));
    } else {
      REQUIRE(mv[i] == 0);
    }
  }
  const double frac = static_cast<double>(kept) / static_cast<double>(s.size());
  CHECK(frac == doctest::Approx(0.7).epsilon(0.02));  // 100000 draws: sd 0.0014
  // The backward pass applies the same mask.
  NDArray dy = NDArray::full(s, 2.0, Context::cpu(), DType::kFloat64);
  NDArray dx = NDArray::zeros(s, Context::cpu(), DType::kFloat64);
  op::invoke_backward(drop, {dy}, {x}, out, {}, {dx}, {OpReq::kWrite});
  auto dxv = values(dx);
  for (size_t i = 0; i < dxv.size(); ++i) REQUIRE(dxv[i] == doctest::Approx(2 * mv[i]));

  // The same seed gives the same mask; the next draw a different one.
  op::ResourceManager::get().seed(42);
  auto again = op::invoke(drop, {x}, {}, true);
  CHECK(values(again[1]) == mv);
  auto next = op::invoke(drop, {x}, {}, true);
  CHECK(values(next[1]) != mv);

  // Inference: identity in 'training' mode, dropout in 'always' mode.
  auto infer = op::invoke(drop, {x}, {}, false);
  CHECK(values(infer[0]) == xv);
  auto always = op::invoke("Dropout", {x}, {{"p", "0.3"}, {"mode", "always"}}, {}, false);
  int64_t zeros = 0;
  for (double v : values(always[0])) zeros += v == 0;
  CHECK(static_cast<double>(zeros) / static_cast<double>(s.size()) ==
        doctest::Approx(0.3).epsilon(0.02));

  // axes: one draw per (n, w), shared along axis 1.
  const Shape s3{50, 4, 60};
  NDArray x3 = random_array(s3, 32, 0.5, 1.5);
  auto out3 = op::invoke("Dropout", {x3}, {{"p", "0.5"}, {"axes", "(1,)"}}, {}, true);
  CHECK(out3[1].shape() == Shape{50, 1, 60});
  auto y3 = values(out3[0]);
  for (int64_t n = 0; n < 50; ++n)
    for (int64_t w = 0; w < 60; ++w)
      for (int64_t c = 1; c < 4; ++c)
        REQUIRE((y3[static_cast<size_t>((n * 4 + c) * 60 + w)] == 0) ==
                (y3[static_cast<size_t>(n * 4 * 60 + w)] == 0));

  // p = 0 keeps everything, p = 1 drops everything.
  CHECK(values(op::invoke("Dropout", {x}, {{"p", "0"}}, {}, true)[0]) == xv);
  for (double v : values(op::invoke("Dropout", {x}, {{"p", "1"}}, {}, true)[0])) REQUIRE(v == 0);
}

TEST_CASE("BatchNorm: training moves the moving statistics; inference leaves them") {
  NDArray x = random_array({8, 2, 3}, 41, -2, 3);
  NDArray gamma = random_array({2}, 42, 0.5, 1.5), beta = random_array({2}, 43);
  NDArray mm = NDArray::full({2}, 0.5, Context::cpu(), DType::kFloat64);
  NDArray mv = NDArray::full({2}, 2.0, Context::cpu(), DType::kFloat64);
  OpInstance bn("BatchNorm", {{"momentum", "0.75"}, {"output_mean_var", "True"}});
  CHECK(bn.num_visible_outputs() == 3);
  auto out = op::invoke(bn, {x, gamma, beta}, {mm, mv}, true);
  auto xv = values(x);
  for (int64_t ch = 0; ch < 2; ++ch) {
    double sum = 0, sq = 0;
    for (int64_t n = 0; n < 8; ++n)
      for (int64_t i = 0; i < 3; ++i) sum += xv[static_cast<size_t>((n * 2 + ch) * 3 + i)];
    const double mean = sum / 24;
    for (int64_t n = 0; n < 8; ++n)
      for (int64_t i = 0; i < 3; ++i) {
        const double d = xv[static_cast<size_t>((n * 2 + ch) * 3 + i)] - mean;
        sq += d * d;
      }
    const double var = sq / 24;
    const size_t k = static_cast<size_t>(ch);
    CHECK(values(out[1])[k] == doctest::Approx(mean));
    CHECK(values(out[2])[k] == doctest::Approx(1 / std::sqrt(var + 1e-3)));  // MXNet: invstd
    CHECK(values(mm)[k] == doctest::Approx(0.5 * 0.75 + mean * 0.25));
    CHECK(values(mv)[k] == doctest::Approx(2.0 * 0.75 + var * 0.25));
  }
  // fix_gamma (default): the output has unit variance and beta's mean.
  auto y = values(out[0]), b = values(beta);
  double m0 = 0;
  for (int64_t n = 0; n < 8; ++n)
    for (int64_t i = 0; i < 3; ++i) m0 += y[static_cast<size_t>(n * 6 + i)];
  CHECK(m0 / 24 == doctest::Approx(b[0]));

  auto before_mm = values(mm), before_mv = values(mv);
  op::invoke(bn, {x, gamma, beta}, {mm, mv}, false);
  CHECK(values(mm) == before_mm);
  CHECK(values(mv) == before_mv);
  op::invoke("BatchNorm", {x, gamma, beta}, {{"use_global_stats", "True"}}, {mm, mv}, true);
  CHECK(values(mm) == before_mm);
}

TEST_CASE("Embedding clips out-of-range indices and truncates fractions") {
  NDArray w = NDArray::from_vector<float>({3, 2}, {0, 1, 10, 11, 20, 21});
  NDArray idx = NDArray::from_vector<float>({5}, {-3, 0.9f, 1.5f, 2, 9});
  auto y = op::invoke("Embedding", {idx, w}, {{"input_dim", "3"}, {"output_dim", "2"}});
  CHECK(y[0].shape() == Shape{5, 2});
  CHECK(y[0].to_vector<float>() == std::vector<float>{0, 1, 0, 1, 10, 11, 20, 21, 20, 21});
  // Integer indices work as well.
  NDArray ints = NDArray::from_vector<int32_t>({2}, {2, 0});
  auto yi = op::invoke("Embedding", {ints, w}, {{"input_dim", "3"}, {"output_dim", "2"}});
  CHECK(yi[0].to_vector<float>() == std::vector<float>{20, 21, 0, 1});
}

// ---------------------------------------------------------- shape inference

TEST_CASE("Convolution shape inference: partial shapes, weights, and errors") {
  AttrMap a{{"kernel", "(3, 3)"}, {"num_filter", "16"}, {"pad", "(1, 1)"}};
  ShapeVector in{Shape{-1, 3, 32, 30}, Shape(), Shape()};
  auto out = infer("Convolution", a, in);
  CHECK(out[0] == Shape{-1, 16, 32, 30});
  CHECK(in[1] == Shape{16, 3, 3, 3});
  CHECK(in[2] == Shape{16});

  // Channels from the weight, batch from the output, rank from the kernel.
  ShapeVector partial{Shape(), Shape{16, 3, 3, 3}, Shape()};
  OpInstance conv("Convolution", a, "conv1");
  ShapeVector aux, o{Shape{8, -1, -1, -1}};
  conv.infer_shape(partial, aux, o);
  CHECK(partial[0] == Shape{8, 3, -1, -1});
  CHECK(o[0] == Shape{8, 16, -1, -1});

  ShapeVector strided{Shape{2, 4, 7, 9}, Shape(), Shape()};
  CHECK(infer("Convolution",
              {{"kernel", "(3, 2)"},
               {"num_filter", "6"},
               {"stride", "(2, 3)"},
               {"dilate", "(2, 1)"},
               {"num_group", "2"}},
              strided)[0] == Shape{2, 6, 2, 3});
  CHECK(strided[1] == Shape{6, 2, 3, 2});
  ShapeVector one_d{Shape{2, 3, 10}, Shape(), Shape()};
  CHECK(infer("Convolution", {{"kernel", "(4,)"}, {"num_filter", "5"}, {"stride", "(3,)"}},
              one_d)[0] == Shape{2, 5, 3});

  ShapeVector small{Shape{1, 3, 2, 2}, Shape(), Shape()};
  CHECK_THROWS_WITH_AS(infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "16"}}, small),
                       "Convolution 'layer': kernel (3, 3) (dilated size 3) exceeds input 'data' "
                       "(1, 3, 2, 2) padded to 2",
                       InputError);
  ShapeVector wrong_c{Shape{1, 3, 8, 8}, Shape{16, 4, 3, 3}, Shape()};
  CHECK_THROWS_WITH_AS(infer("Convolution", a, wrong_c),
                       "Convolution 'layer': input 'weight': shape (16, 4, 3, 3) conflicts with "
                       "(16, 3, 3, 3)",
                       InputError);
  ShapeVector groups{Shape{1, 3, 8, 8}, Shape(), Shape()};
  CHECK_THROWS_WITH_AS(
      infer("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "4"}, {"num_group", "2"}}, groups),
      "Convolution 'layer': input 'data' has 3 channels, not divisible by num_group 2", InputError);
  ShapeVector rank{Shape{1, 3, 8}, Shape(), Shape()};
  CHECK_THROWS_WITH_AS(infer("Convolution", a, rank),
                       "Convolution 'layer': input 'data' must have 4 dimensions, but has shape "
                       "(1, 3, 8)",
                       InputError);
  CHECK_THROWS_WITH_AS(
      OpInstance("Convolution",
                 {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"stride", "(1, 1, 1)"}}, "conv2"),
      "conv2: stride (1, 1, 1) must have 2 dimension(s), like kernel (3, 3)", InputError);
  CHECK_THROWS_WITH_AS(
      OpInstance("Convolution", {{"kernel", "(3, 3, 3)"}, {"num_filter", "2"}}, "conv3"),
      "conv3: kernel (3, 3, 3) must have 1 or 2 dimensions (1-D or 2-D; 3-D is "
      "not supported)",
      InputError);
  CHECK_THROWS_WITH_AS(
      OpInstance("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"layout", "NCW"}},
                 "conv4"),
      "conv4: layout NCW does not match the 2-D kernel (3, 3)", InputError);
  CHECK_THROWS_WITH_AS(
      OpInstance("Convolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"layout", "NHWC"}},
                 "conv5"),
      "conv5: parameter 'layout': 'NHWC' is not one of {'None', 'NCW', 'NCHW'} (did you mean "
      "'NCW'?)",
      InputError);
  // MXNet's compatibility parameters are accepted and printed back.
  OpInstance compat("Convolution", {{"kernel", "(3, 3)"},
                                    {"num_filter", "2"},
                                    {"workspace", "256"},
                                    {"cudnn_tune", "fastest"},
                                    {"cudnn_off", "True"},
                                    {"layout", "NCHW"}});
  CHECK(compat.attrs().at("cudnn_tune") == "fastest");
  CHECK(compat.attrs().at("stride") == "()");
}

TEST_CASE("Deconvolution shape inference: output size rules, target_shape, errors") {
  ShapeVector in{Shape{2, 3, 4, 5}, Shape()};
  auto out = infer("Deconvolution",
                   {{"kernel", "(3, 3)"},
                    {"num_filter", "6"},
                    {"stride", "(2, 2)"},
                    {"pad", "(1, 1)"},
                    {"adj", "(1, 0)"},
                    {"num_group", "3"}},
                   in);
  CHECK(out[0] == Shape{2, 6, 8, 9});  // 2 * (4 - 1) + 3 - 2 + 1, 2 * (5 - 1) + 3 - 2
  CHECK(in[1] == Shape{3, 2, 3, 3});
  CHECK(OpInstance("Deconvolution", {{"kernel", "(2, 2)"}, {"num_filter", "1"}}).input_names() ==
        std::vector<std::string>{"data", "weight"});  // no_bias defaults to True

  // target_shape gives the output even before the input's size is known.
  AttrMap target{{"kernel", "(4, 4)"},
                 {"num_filter", "2"},
                 {"stride", "(2, 2)"},
                 {"target_shape", "(13, 12)"}};
  ShapeVector unknown{Shape{-1, 5, -1, -1}, Shape()};
  CHECK(infer("Deconvolution", target, unknown)[0] == Shape{-1, 2, 13, 12});
  ShapeVector known{Shape{1, 5, 6, 6}, Shape()};
  CHECK(infer("Deconvolution", target, known)[0] == Shape{1, 2, 13, 12});

  ShapeVector big{Shape{1, 5, 2, 2}, Shape()};
  CHECK_THROWS_WITH_AS(infer("Deconvolution", target, big),
                       "Deconvolution 'layer': target_shape (13, 12) is too big for input 'data' "
                       "(1, 5, 2, 2)",
                       InputError);
  ShapeVector adj{Shape{1, 2, 3, 3}, Shape()};
  CHECK_THROWS_WITH_AS(
      infer("Deconvolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"adj", "(1, 1)"}}, adj),
      "Deconvolution 'layer': adj 1 must be smaller than stride 1", InputError);
  CHECK_THROWS_WITH_AS(
      OpInstance("Deconvolution", {{"kernel", "(3, 3)"}, {"num_filter", "2"}, {"adj", "(1,)"}},
                 "up1"),
      "up1: adj (1,) must have 2 dimension(s), like kernel (3, 3)", InputError);
}

TEST_CASE("Pooling shape inference: conventions, global pooling, defaults and errors") {
  ShapeVector in{Shape{-1, 3, 7, 7}};
  CHECK(infer("Pooling", {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}}, in)[0] ==
        Shape{-1, 3, 3, 3});
  ShapeVector full{Shape{1, 3, 7, 7}};
  CHECK(infer("Pooling",
              {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pooling_convention", "full"}},
              full)[0] == Shape{1, 3, 4, 4});
  ShapeVector stride1{Shape{1, 3, 7, 6}};
  CHECK(infer("Pooling", {{"kernel", "(2, 2)"}}, stride1)[0] == Shape{1, 3, 6, 5});
  ShapeVector global{Shape{4, 8, 5, 6}};
  CHECK(infer("Pooling", {{"global_pool", "True"}, {"kernel", "(9, 9)"}}, global)[0] ==
        Shape{4, 8, 1, 1});
  ShapeVector global1d{Shape{4, 8, 5}};
  CHECK(infer("Pooling", {{"global_pool", "True"}}, global1d)[0] == Shape{4, 8, 1});
  ShapeVector back{Shape()};
  ShapeVector aux, out{Shape{2, 3, 1, 1}};
  OpInstance("Pooling", {{"global_pool", "True"}}).infer_shape(back, aux, out);
  CHECK(back[0] == Shape{2, 3, -1, -1});

  ShapeVector small{Shape{1, 3, 2, 2}};
  CHECK_THROWS_WITH_AS(infer("Pooling", {{"kernel", "(3, 3)"}}, small),
                       "Pooling 'layer': kernel size 3 exceeds input size 2 padded to 2",
                       InputError);
  CHECK_THROWS_WITH_AS(OpInstance("Pooling", {{"pool_type", "avg"}}, "pool1"),
                       "pool1: parameter 'kernel' is required unless global_pool is True",
                       InputError);
  CHECK_THROWS_WITH_AS(OpInstance("Pooling", {{"kernel", "(2, 2)"}, {"pool_type", "lp"}}, "pool2"),
                       "pool2: parameter 'pool_type': 'lp' is not one of {'max', 'avg', 'sum'}",
                       InputError);
  // A layout must agree with the kernel's rank.
  ShapeVector ncw{Shape{2, 3, 7}};
  CHECK(infer("Pooling", {{"kernel", "(3,)"}, {"layout", "NCW"}}, ncw)[0] == Shape{2, 3, 5});
  ShapeVector nchw{Shape{2, 3, 7, 6}};
  CHECK(infer("Pooling", {{"kernel", "(3, 2)"}, {"layout", "NCHW"}}, nchw)[0] == Shape{2, 3, 5, 5});
  CHECK_THROWS_WITH_AS(OpInstance("Pooling", {{"kernel", "(2, 2)"}, {"layout", "NCW"}}, "pool3"),
                       "pool3: layout NCW does not match the 2-D kernel (2, 2)", InputError);
  CHECK_THROWS_WITH_AS(OpInstance("Pooling", {{"kernel", "(2,)"}, {"layout", "NCHW"}}, "pool4"),
                       "pool4: layout NCHW does not match the 1-D kernel (2,)", InputError);
  ShapeVector five{Shape{1, 2, 3, 4, 5}};
  CHECK_THROWS_WITH_AS(infer("Pooling", {{"global_pool", "True"}}, five),
                       "Pooling 'layer': input 'data' must be 3-D (N, C, W) or 4-D (N, C, H, W), "
                       "but has shape (1, 2, 3, 4, 5)",
                       InputError);
}

TEST_CASE("BatchNorm, LRN, Dropout, LeakyReLU, Embedding shape and type inference") {
  // BatchNorm: channels from data or from any per-channel array.
  ShapeVector in{Shape{-1, 5, 4, 4}, Shape(), Shape()};
  auto out = infer("BatchNorm", {}, in, {Shape(), Shape()});
  CHECK(in[1] == Shape{5});
  CHECK(out[0] == Shape{-1, 5, 4, 4});
  CHECK(out[2] == Shape{5});
  OpInstance bn("BatchNorm", {{"axis", "-1"}}, "bn1");
  ShapeVector from_gamma{Shape{2, 3, -1}, Shape{7}, Shape()}, aux{Shape(), Shape()}, o(3);
  bn.infer_shape(from_gamma, aux, o);
  CHECK(from_gamma[0] == Shape{2, 3, 7});
  CHECK(aux[1] == Shape{7});
  ShapeVector bad_axis{Shape{2, 3}, Shape(), Shape()};
  CHECK_THROWS_WITH_AS(infer("BatchNorm", {{"axis", "2"}}, bad_axis, {Shape(), Shape()}),
                       "BatchNorm 'layer': axis 2 is out of range for 2-D input 'data'",
                       InputError);
  ShapeVector mismatch{Shape{2, 3, 4}, Shape{4}, Shape()};
  CHECK_THROWS_WITH_AS(infer("BatchNorm", {}, mismatch, {Shape(), Shape()}),
                       "BatchNorm 'layer': input 'gamma': shape (3,) conflicts with (4,)",
                       InputError);
  CHECK(OpInstance("BatchNorm", {}).num_visible_outputs() == 1);
  CHECK(OpInstance("BatchNorm", {}).attrs().at("fix_gamma") == "True");

  ShapeVector lrn{Shape{2, 3, 4}};
  CHECK_THROWS_WITH_AS(infer("LRN", {{"nsize", "3"}}, lrn),
                       "LRN 'layer': input 'data' must have 4 dimensions, but has shape (2, 3, 4)",
                       InputError);

  ShapeVector drop{Shape{-1, 3, 4}};
  auto d = infer("Dropout", {{"axes", "(0, 2)"}}, drop);
  CHECK(d[0] == Shape{-1, 3, 4});
  CHECK(d[1] == Shape{1, 3, 1});
  CHECK(OpInstance("Dropout", {}).num_visible_outputs() == 1);

  ShapeVector prelu{Shape{2, 6, 3}, Shape()};
  infer("LeakyReLU", {{"act_type", "prelu"}}, prelu);
  CHECK(prelu[1] == Shape{6});
  ShapeVector bad_gamma{Shape{2, 6, 3}, Shape{4}};
  CHECK_THROWS_WITH_AS(infer("LeakyReLU", {{"act_type", "prelu"}}, bad_gamma),
                       "LeakyReLU 'layer': input 'gamma': shape (4,) conflicts with (6,)",
                       InputError);
  CHECK_THROWS_WITH_AS(OpInstance("LeakyReLU", {{"act_type", "rrelu"}}, "act1"),
                       "act1: act_type 'rrelu' (random slopes) is not supported; at inference it "
                       "equals act_type 'leaky' with slope (lower_bound + upper_bound) / 2",
                       InputError);

  ShapeVector emb{Shape{4, -1}, Shape()};
  auto e = infer("Embedding", {{"input_dim", "10"}, {"output_dim", "7"}}, emb);
  CHECK(e[0] == Shape{4, -1, 7});
  CHECK(emb[1] == Shape{10, 7});
  OpInstance embedding("Embedding", {{"input_dim", "10"}, {"output_dim", "7"}}, "emb1");
  op::DTypeVector types{DType::kInt32, std::nullopt}, no_aux, out_types(1);
  embedding.infer_type(types, no_aux, out_types);
  CHECK(types[0] == DType::kInt32);
  CHECK(types[1] == DType::kFloat32);
  CHECK(out_types[0] == DType::kFloat32);
  op::DTypeVector conflict{std::nullopt, DType::kFloat64};
  CHECK_THROWS_WITH_AS(embedding.infer_type(conflict, no_aux, out_types),
                       "emb1: input 'weight': dtype float64 conflicts with float32", InputError);
}

TEST_CASE("MX_DNNL chooses the CPU kernels: 0 the reference ones, unset or 1 oneDNN when built") {
  const char* env = std::getenv("MX_DNNL");
  if (env != nullptr && std::string(env) == "0")
    CHECK_FALSE(mx::op::dnnl_enabled());
  else
    CHECK(mx::op::dnnl_enabled() == mx::op::dnnl_built());
}
