// The GPU convolution family's host-side logic, run on the CPU: the
// per-element Pooling and LRN kernels (the functors the CUDA kernels run,
// over the same index spaces) against the CPU operators, and the decisions
// of the cuDNN convolution (the dims cuDNN sees, a deconvolution's pad/adj as
// cuDNN parameters, the algorithm-cache key and the algorithm choice).
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/host_launch.h"
#include "op/invoke.h"
#include "op/nn/conv_util.h"
#include "op/nn/lrn_kernels.h"
#include "op/nn/pooling_kernels.h"
#include "op/registry.h"
#if MX_USE_CUDA
#include "op/cuda/conv_algo.h"
#endif

using namespace mx;
using op::AttrMap;
using op::OpInstance;
using op::OpReq;

namespace {

// Random values; with `levels` > 0 small integers 0..levels-1, so that
// windows hold tied maxima.
std::vector<double> random_values(int64_t n, uint64_t seed, int levels = 0) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> level(0, std::max(levels - 1, 0));
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = levels > 0 ? level(gen) : real(gen);
  return v;
}

void check_close(const std::vector<double>& got, const std::vector<double>& want,
                 const std::string& what) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element ", i);
    CHECK(std::abs(got[i] - want[i]) <= 1e-12 * (1.0 + std::abs(want[i])));
  }
}

struct PoolCase {
  AttrMap attrs;
  Shape data;
  int levels = 0;
};

std::vector<PoolCase> pool_cases() {
  std::vector<PoolCase> cases;
  for (const char* type : {"max", "avg", "sum"}) {
    const std::string t = type;
    cases.push_back({{{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pool_type", t}}, {2, 3, 9, 8}});
    cases.push_back(
        {{{"kernel", "(3, 2)"}, {"stride", "(2, 1)"}, {"pad", "(1, 1)"}, {"pool_type", t}},
         {1, 2, 7, 6}});
    cases.push_back({{{"kernel", "(3, 3)"},
                      {"stride", "(2, 2)"},
                      {"pad", "(1, 1)"},
                      {"pooling_convention", "full"},
                      {"pool_type", t}},
                     {2, 2, 6, 7}});
    cases.push_back({{{"kernel", "(2, 3)"},
                      {"stride", "(3, 2)"},
                      {"pad", "(1, 2)"},
                      {"count_include_pad", "False"},
                      {"pooling_convention", "full"},
                      {"pool_type", t}},
                     {1, 3, 8, 5}});
    cases.push_back(
        {{{"kernel", "(4,)"}, {"stride", "(3,)"}, {"pad", "(1,)"}, {"pool_type", t}}, {2, 3, 11}});
    cases.push_back({{{"global_pool", "True"}, {"pool_type", t}}, {2, 3, 5, 4}});
    cases.push_back({{{"global_pool", "True"}, {"pool_type", t}}, {2, 2, 6}});
    // Overlapping windows over small integers: ties in most windows.
    cases.push_back(
        {{{"kernel", "(3, 3)"}, {"stride", "(1, 1)"}, {"pad", "(1, 1)"}, {"pool_type", t}},
         {1, 2, 6, 5},
         3});
  }
  return cases;
}

}  // namespace

TEST_CASE("GPU pooling kernels compute what the CPU Pooling computes, forward and gradient") {
  op::ScopedDnnl reference(false);  // the CPU's own kernels define the semantics
  uint64_t seed = 1;
  for (const PoolCase& c : pool_cases()) {
    const OpInstance pool("Pooling", c.attrs);
    INFO("Pooling ", pool.attrs().at("pool_type"), " ", c.data.to_string(), " kernel ",
         pool.attrs().at("kernel"));
    const std::vector<double> x = random_values(c.data.size(), seed++, c.levels);
    const NDArray xa = NDArray::from_vector<double>(c.data, x);
    const std::vector<NDArray> ya = op::invoke(pool, {xa});
    const op::PoolKernelGeom g = op::pooling_kernel_geom(c.attrs, c.data);
    REQUIRE(g.out_size() == ya[0].shape().size());
    REQUIRE(g.in_size() == c.data.size());

    for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
      std::vector<double> y = random_values(g.out_size(), seed++);
      std::vector<double> want = ya[0].to_vector<double>();
      if (req == OpReq::kAdd)
        for (size_t i = 0; i < want.size(); ++i) want[i] += y[i];
      // In 64-bit and in 32-bit indices (the GPU's choice where they fit).
      std::vector<double> y32 = y;
      op::for_each_element_host(g.out_size(), op::PoolForward<double>{g, x.data(), y.data(), req});
      op::for_each_element_host(g.out_size(),
                                op::PoolForward<double, int32_t>{g, x.data(), y32.data(), req});
      check_close(y, want, req == OpReq::kAdd ? "forward, req add" : "forward");
      CHECK(y32 == y);
    }

    const std::vector<double> dy = random_values(g.out_size(), seed++);
    const std::vector<double> y = ya[0].to_vector<double>();
    for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
      const std::vector<double> start = random_values(g.in_size(), seed++);
      NDArray dxa = NDArray::from_vector<double>(c.data, start);
      op::invoke_backward(pool, {NDArray::from_vector<double>(ya[0].shape(), dy)}, {xa}, ya, {},
                          {dxa}, {req});
      std::vector<double> dx = start, dx32 = start;
      op::for_each_element_host(
          g.in_size(), op::PoolBackward<double>{g, x.data(), y.data(), dy.data(), dx.data(), req});
      op::for_each_element_host(
          g.in_size(),
          op::PoolBackward<double, int32_t>{g, x.data(), y.data(), dy.data(), dx32.data(), req});
      check_close(dx, dxa.to_vector<double>(),
                  req == OpReq::kAdd ? "gradient, req add" : "gradient");
      CHECK(dx32 == dx);
    }
  }
}

TEST_CASE("GPU pooling gradient goes to each window's first maximum") {
  // The CPU test's case: 2x2 windows, stride 1, over equal values.
  const AttrMap attrs{{"kernel", "(2, 2)"}, {"stride", "(1, 1)"}, {"pool_type", "max"}};
  const op::PoolKernelGeom g = op::pooling_kernel_geom(attrs, {1, 1, 3, 3});
  const std::vector<double> x(9, 2.0), y(4, 2.0), dy{1, 10, 100, 1000};
  std::vector<double> dx(9, 7.0);
  op::for_each_element_host(g.in_size(), op::PoolBackward<double>{g, x.data(), y.data(), dy.data(),
                                                                  dx.data(), OpReq::kWrite});
  CHECK(dx == std::vector<double>{1, 10, 0, 100, 1000, 0, 0, 0, 0});
}

TEST_CASE("GPU LRN kernels compute what the CPU LRN computes, with tmp_norm") {
  op::ScopedDnnl reference(false);  // oneDNN's LRN does not write tmp_norm
  uint64_t seed = 100;
  for (int nsize : {1, 2, 3, 4, 5}) {
    for (const Shape& s : {Shape{2, 5, 3, 4}, Shape{1, 3, 2, 2}, Shape{2, 1, 3, 3}}) {
      const AttrMap attrs{
          {"nsize", std::to_string(nsize)}, {"alpha", "0.3"}, {"beta", "0.6"}, {"knorm", "1.5"}};
      INFO("LRN nsize ", nsize, " on ", s.to_string());
      const OpInstance lrn("LRN", attrs);
      const std::vector<double> x = random_values(s.size(), seed++);
      const NDArray xa = NDArray::from_vector<double>(s, x);
      const std::vector<NDArray> outs = op::invoke(lrn, {xa}, {}, true);
      REQUIRE(outs.size() == 2);
      const op::LrnKernelGeom g = op::lrn_kernel_geom(attrs, s);
      REQUIRE(g.size() == s.size());

      std::vector<double> y = random_values(s.size(), seed++), norm(y.size(), -1.0);
      const std::vector<double> y_start = y;
      op::for_each_element_host(
          g.size(), op::LrnForward<double>{g, x.data(), y.data(), norm.data(), OpReq::kAdd});
      std::vector<double> want = outs[0].to_vector<double>();
      for (size_t i = 0; i < want.size(); ++i) want[i] += y_start[i];
      check_close(y, want, "output, req add");
      check_close(norm, outs[1].to_vector<double>(), "tmp_norm");
      op::for_each_element_host(
          g.size(), op::LrnForward<double>{g, x.data(), y.data(), norm.data(), OpReq::kWrite});
      check_close(y, outs[0].to_vector<double>(), "output");

      const std::vector<double> dy = random_values(s.size(), seed++);
      for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
        const std::vector<double> start = random_values(s.size(), seed++);
        NDArray dxa = NDArray::from_vector<double>(s, start);
        op::invoke_backward(lrn, {NDArray::from_vector<double>(s, dy)}, {xa}, outs, {}, {dxa},
                            {req});
        std::vector<double> dx = start;
        op::for_each_element_host(
            g.size(),
            op::LrnBackward<double>{g, x.data(), y.data(), norm.data(), dy.data(), dx.data(), req});
        check_close(dx, dxa.to_vector<double>(), req == OpReq::kAdd ? "gradient, add" : "gradient");
      }
    }
  }
}

#if MX_USE_CUDA
TEST_CASE("the convolution family has GPU kernels, forward and backward") {
  for (const char* name : {"Convolution", "Deconvolution", "Pooling", "LRN"}) {
    INFO(name);
    const op::OpDef& def = op::OpRegistry::get().find(name);
    CHECK(def.has_kernel(DeviceKind::kGPU));
    CHECK(static_cast<bool>(def.backward[static_cast<int>(DeviceKind::kGPU)]));
  }
}

TEST_CASE("cuDNN sees a 1-D convolution as a 2-D one of height 1") {
  const op::Window2d win = op::make_window({Shape{3}, Shape{2}, Shape{2}, Shape{1}}, "Convolution");
  // data (4, 6, 11), 3 groups, 9 filters: output width (11 + 2 - 5) / 2 + 1 = 5.
  const op::ConvGeom g = op::conv_geom(win, 3, Shape{4, 6, 11}, 6, Shape{4, 9, 5}, 9);
  const op::cuda::CudnnConvShape s = op::cuda::cudnn_conv_shape(g, "Convolution");
  CHECK(s.x == std::array<int64_t, 4>{4, 6, 1, 11});
  CHECK(s.w == std::array<int64_t, 4>{9, 2, 1, 3});
  CHECK(s.y == std::array<int64_t, 4>{4, 9, 1, 5});
  CHECK(s.pad == std::array<int, 2>{0, 1});
  CHECK(s.stride == std::array<int, 2>{1, 2});
  CHECK(s.dilation == std::array<int, 2>{1, 2});
  CHECK(s.groups == 3);
  CHECK(op::cuda::cudnn_conv_out_dim(s.x[3], s.pad[1], s.stride[1], s.dilation[1], s.w[3]) == 5);
  CHECK(op::cuda::cudnn_conv_out_dim(s.x[2], s.pad[0], s.stride[0], s.dilation[0], s.w[2]) == 1);
}

TEST_CASE("a deconvolution's pad, adj and target_shape become a convolution cuDNN accepts") {
  struct Case {
    AttrMap attrs;
    Shape data;
  };
  const std::vector<Case> cases = {
      {{{"kernel", "(3, 3)"},
        {"stride", "(2, 2)"},
        {"pad", "(1, 1)"},
        {"adj", "(1, 1)"},
        {"num_filter", "4"}},
       {2, 3, 5, 4}},
      {{{"kernel", "(4, 3)"},
        {"stride", "(3, 2)"},
        {"dilate", "(2, 1)"},
        {"pad", "(2, 0)"},
        {"adj", "(2, 1)"},
        {"num_filter", "6"},
        {"num_group", "3"}},
       {1, 6, 4, 5}},
      {{{"kernel", "(3, 3)"},
        {"stride", "(2, 2)"},
        {"target_shape", "(10, 9)"},
        {"num_filter", "2"}},
       {2, 3, 5, 5}},
      {{{"kernel", "(5,)"}, {"stride", "(3,)"}, {"target_shape", "(14,)"}, {"num_filter", "2"}},
       {2, 4, 5}},
      {{{"kernel", "(3,)"},
        {"stride", "(2,)"},
        {"pad", "(1,)"},
        {"adj", "(1,)"},
        {"num_filter", "3"}},
       {1, 2, 6}},
  };
  for (const Case& c : cases) {
    const OpInstance deconv("Deconvolution", c.attrs);
    INFO("Deconvolution ", c.data.to_string(), " kernel ", c.attrs.at("kernel"));
    op::ShapeVector in{c.data, Shape()}, aux, out{Shape()};
    deconv.infer_shape(in, aux, out);
    const Shape& o = out[0];
    const auto shape_of = [](const AttrMap& a, const char* key) {
      return a.count(key) ? Shape::parse(a.at(key)) : Shape::scalar();
    };
    const op::Window2d win =
        op::make_window({shape_of(c.attrs, "kernel"), shape_of(c.attrs, "stride"),
                         shape_of(c.attrs, "dilate"), shape_of(c.attrs, "pad")},
                        "Deconvolution");
    const int64_t groups = c.attrs.count("num_group") ? std::stoi(c.attrs.at("num_group")) : 1;
    const int64_t filters = std::stoi(c.attrs.at("num_filter"));
    const op::ConvGeom g =
        op::deconvolution_geom(win, shape_of(c.attrs, "adj"), shape_of(c.attrs, "target_shape"),
                               groups, filters, c.data, o);
    const op::cuda::CudnnConvShape s = op::cuda::cudnn_conv_shape(g, "Deconvolution");
    // cuDNN's x is the deconvolution's output, y its input, w its weight.
    const bool one_d = c.data.ndim() == 3;
    CHECK(s.x[0] == o[0]);
    CHECK(s.x[1] == filters);
    CHECK(s.x[2] == (one_d ? 1 : o[2]));
    CHECK(s.x[3] == o[o.ndim() - 1]);
    CHECK(s.y[1] == c.data[1]);
    CHECK(s.y[3] == c.data[c.data.ndim() - 1]);
    CHECK(s.w[0] == in[1][0]);
    CHECK(s.w[1] == in[1][1]);
    CHECK(s.w[3] == in[1][in[1].ndim() - 1]);
    // The convolution cuDNN checks: the deconvolution's output convolved
    // gives back exactly its input (adj < stride is lost to the rounding).
    for (int d = 0; d < 2; ++d)
      CHECK(op::cuda::cudnn_conv_out_dim(s.x[2 + d], s.pad[d], s.stride[d], s.dilation[d],
                                         s.w[2 + d]) == s.y[2 + d]);
  }
}

TEST_CASE("the cuDNN algorithm cache key tells every parameter apart") {
  const op::Window2d win =
      op::make_window({Shape{3, 3}, Shape{1, 1}, Shape{1, 1}, Shape{1, 1}}, "Convolution");
  const op::ConvGeom g = op::conv_geom(win, 1, Shape{2, 4, 8, 8}, 4, Shape{2, 6, 8, 8}, 6);
  const auto s = op::cuda::cudnn_conv_shape(g, "Convolution");
  using op::cuda::AlgoPolicy;
  using op::cuda::ConvPass;
  const auto key = [](ConvPass pass, const op::cuda::CudnnConvShape& shape, DType dtype,
                      AlgoPolicy policy, size_t ws, int device) {
    return op::cuda::conv_algo_key(pass, shape, dtype, policy, ws, device);
  };
  const std::string base =
      key(ConvPass::kForward, s, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 0);
  CHECK(base == key(ConvPass::kForward, s, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 0));
  std::vector<std::string> others = {
      key(ConvPass::kBackwardData, s, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 0),
      key(ConvPass::kBackwardFilter, s, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 0),
      key(ConvPass::kForward, s, DType::kFloat64, AlgoPolicy::kFitWorkspace, 1 << 20, 0),
      key(ConvPass::kForward, s, DType::kFloat32, AlgoPolicy::kFastest, 1 << 20, 0),
      key(ConvPass::kForward, s, DType::kFloat32, AlgoPolicy::kHeuristic, 1 << 20, 0),
      key(ConvPass::kForward, s, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 21, 0),
      key(ConvPass::kForward, s, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 1)};
  // Each field of the shape changed alone.
  for (int field = 0; field < 16; ++field) {
    op::cuda::CudnnConvShape t = s;
    if (field < 4)
      t.x[field] += 1;
    else if (field < 8)
      t.w[field - 4] += 1;
    else if (field < 12)
      t.y[field - 8] += 1;
    else if (field < 14)
      t.pad[field - 12] += 1;
    else
      t.stride[field - 14] += 1;
    others.push_back(
        key(ConvPass::kForward, t, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 0));
  }
  for (int d = 0; d < 2; ++d) {
    op::cuda::CudnnConvShape t = s;
    t.dilation[d] += 1;
    others.push_back(
        key(ConvPass::kForward, t, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 0));
  }
  op::cuda::CudnnConvShape grouped = s;
  grouped.groups = 2;
  others.push_back(
      key(ConvPass::kForward, grouped, DType::kFloat32, AlgoPolicy::kFitWorkspace, 1 << 20, 0));
  for (size_t i = 0; i < others.size(); ++i) {
    INFO("variant ", i, ": ", others[i]);
    CHECK(others[i] != base);
    for (size_t j = i + 1; j < others.size(); ++j) CHECK(others[i] != others[j]);
  }
}

TEST_CASE("the cuDNN algorithm is the first usable one within the workspace limit") {
  using op::cuda::AlgoCandidate;
  using op::cuda::AlgoPolicy;
  using op::cuda::pick_algo;
  // In cuDNN's order (fastest first): a failed one, one on TF32 math, then
  // usable ones needing 900, 300 and 100 bytes.
  const std::vector<AlgoCandidate> c = {{7, false, true, 0.1f, 0},
                                        {6, true, false, 0.2f, 0},
                                        {5, true, true, 0.3f, 900},
                                        {4, true, true, 0.4f, 300},
                                        {3, true, true, 0.5f, 100}};
  CHECK(pick_algo(c, AlgoPolicy::kFastest, 0) == 2u);
  CHECK(pick_algo(c, AlgoPolicy::kFitWorkspace, 1000) == 2u);
  CHECK(pick_algo(c, AlgoPolicy::kFitWorkspace, 500) == 3u);
  CHECK(pick_algo(c, AlgoPolicy::kHeuristic, 300) == 3u);
  CHECK(pick_algo(c, AlgoPolicy::kHeuristic, 299) == 4u);
  // None fits: the one needing the least workspace (the CPU, too, takes
  // more than 'workspace' rather than fail).
  CHECK(pick_algo(c, AlgoPolicy::kFitWorkspace, 50) == 4u);
  CHECK_FALSE(pick_algo({c[0], c[1]}, AlgoPolicy::kFastest, 1000).has_value());
  CHECK_FALSE(pick_algo({}, AlgoPolicy::kFitWorkspace, 1000).has_value());
}
#endif
