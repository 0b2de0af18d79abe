// The GPU kernels of the sequence models' tensor operators, checked on the
// CPU: their per-element functors (op/tensor/shape_kernels.h,
// indexing_kernels.h, init_kernels.h, ordering_kernels.h, reduce_kernels.h)
// run with for_each_element_host, and topk's and norm's block kernels with
// an emulated block of threads, over the index spaces the GPU launches; the
// results are compared with the CPU operators through op::invoke.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

#include "op/host_launch.h"
#include "op/invoke.h"
#include "op/tensor/broadcast_util.h"
#include "op/tensor/indexing_kernels.h"
#include "op/tensor/init_kernels.h"
#include "op/tensor/ordering_kernels.h"
#include "op/tensor/shape_util.h"

using namespace mx;
using op::AttrMap;
using op::for_each_element_host;
using op::OpInstance;
using op::OpReq;
namespace kernels = mx::op::kernels;

namespace {

NDArray ready(NDArray a) {
  a.wait_to_read();
  return a;
}

std::vector<double> random_values(int64_t n, double low, double high, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(low, high);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = uniform(rng);
  return v;
}

NDArray doubles(const Shape& shape, const std::vector<double>& v) {
  return ready(NDArray::from_vector<double>(shape, v));
}

// The CPU operator's outputs and, for the output gradients, its input
// gradients (req kWrite).
struct CpuRun {
  std::vector<NDArray> outputs, grads;
};
CpuRun run_cpu(const std::string& name, const AttrMap& attrs, const std::vector<NDArray>& inputs,
               const std::vector<NDArray>& out_grads = {}) {
  const OpInstance op(name, attrs);
  CpuRun r;
  r.outputs = op::invoke(op, inputs);
  for (auto& o : r.outputs) o.wait_to_read();
  if (out_grads.empty()) return r;
  for (const NDArray& in : inputs)
    r.grads.push_back(NDArray::zeros(in.shape(), in.ctx(), in.dtype()));
  op::invoke_backward(op, out_grads, inputs, r.outputs, {}, r.grads,
                      std::vector<OpReq>(inputs.size(), OpReq::kWrite));
  for (auto& g : r.grads) g.wait_to_read();
  return r;
}

void check_equal(const std::vector<double>& got, const std::vector<double>& want, const char* what,
                 double tol = 0) {
  INFO(what);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::abs(got[i] - want[i]) > tol * std::max(1.0, std::abs(want[i]))) {
      FAIL_CHECK("element ", i, ": ", got[i], " vs ", want[i]);
      return;
    }
  }
}

std::vector<double> as_doubles(const NDArray& a) {
  std::vector<double> out;
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    for (const T& v : a.to_vector<T>()) out.push_back(kernels::convert_value<double>(v));
  });
  return out;
}

}  // namespace

TEST_CASE("strided views: the GPU's gather and scatter match the CPU's, merged or not") {
  // A 3x4x5 input seen through views with zero, negative and merged strides.
  const std::vector<double> in = random_values(60, -1, 1, 1);
  struct View {
    std::vector<int64_t> dims, strides;
    int64_t offset;
  };
  const std::vector<View> views = {
      {{3, 4, 5}, {20, 5, 1}, 0},        // contiguous: merges into one axis
      {{2, 3, 4, 5}, {0, 20, 5, 1}, 0},  // tiled twice
      {{3, 2, 4, 5}, {20, 0, 5, 1}, 0},  // repeated in the middle
      {{3, 4, 3}, {-20, -5, 2}, 55},     // reversed, every second column
      {{5, 4, 3}, {1, 5, 20}, 0},        // transposed
      {{1, 1, 1}, {20, 5, 1}, 7},        // one element
  };
  for (const View& v : views) {
    CAPTURE(v.dims.size());
    const kernels::StridedIndex index = kernels::strided_index(v.dims, v.strides);
    int64_t n = 1;
    for (int64_t d : v.dims) n *= d;
    // The plain definition, axis by axis.
    std::vector<double> want(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int64_t rest = i, off = v.offset;
      for (size_t d = v.dims.size(); d-- > 0;) {
        off += (rest % v.dims[d]) * v.strides[d];
        rest /= v.dims[d];
      }
      want[static_cast<size_t>(i)] = in[static_cast<size_t>(off)];
    }
    std::vector<double> gpu(static_cast<size_t>(n), NAN), cpu(gpu);
    for_each_element_host(
        n, kernels::StridedGather<double>{gpu.data(), in.data() + v.offset, index, OpReq::kWrite});
    op::strided_gather(cpu.data(), in.data() + v.offset, index, n, OpReq::kWrite);
    check_equal(gpu, want, "gather (GPU functor)");
    check_equal(cpu, want, "gather (CPU runs)");
    std::vector<double> added(static_cast<size_t>(n), 1.0);
    op::strided_gather(added.data(), in.data() + v.offset, index, n, OpReq::kAdd);
    for (size_t i = 0; i < want.size(); ++i) CHECK(added[i] == 1.0 + want[i]);
    bool distinct = true;
    for (int64_t s : v.strides) distinct = distinct && s != 0;
    if (!distinct) continue;
    std::vector<double> back_gpu(in.size(), 0.0), back_cpu(in.size(), 0.0);
    for_each_element_host(n, kernels::StridedScatter<double>{back_gpu.data() + v.offset,
                                                             want.data(), index, OpReq::kAdd});
    op::strided_scatter(back_cpu.data() + v.offset, want.data(), index, n, OpReq::kAdd);
    check_equal(back_gpu, back_cpu, "scatter");
  }
}

TEST_CASE("take: the GPU's gather and scatter-add match the CPU operator in every mode") {
  const Shape shape{3, 4, 2};
  const NDArray data = doubles(shape, random_values(shape.size(), -1, 1, 2));
  const std::vector<double> idx_values = {-5, -1, 0, 2.7, 3, 4, 9, -0.5};
  for (const char* mode : {"clip", "wrap", "raise"}) {
    for (int axis : {0, 1, -1}) {
      for (DType index_type : {DType::kFloat32, DType::kInt32, DType::kInt64, DType::kFloat16}) {
        const std::string mode_name = mode, type_name = dtype_name(index_type);
        CAPTURE(mode_name);
        CAPTURE(axis);
        CAPTURE(type_name);
        const bool raise = mode_name == "raise";
        const int a = axis < 0 ? axis + 3 : axis;
        std::vector<double> v;
        for (double x : idx_values)
          if (!raise || (x >= 0 && x <= static_cast<double>(shape[a] - 1))) v.push_back(x);
        const NDArray idx = ready(op::invoke("Cast", {doubles({static_cast<int64_t>(v.size())}, v)},
                                             {{"dtype", dtype_name(index_type)}})[0]);
        const AttrMap attrs{{"mode", mode}, {"axis", std::to_string(axis)}};
        const OpInstance probe("take", attrs);
        op::ShapeVector in{shape, idx.shape()}, aux, out(1);
        probe.infer_shape(in, aux, out);
        const NDArray g = doubles(out[0], random_values(out[0].size(), -1, 1, 3));
        const CpuRun cpu = run_cpu("take", attrs, {data, idx}, {g});
        const kernels::TakeMode m = raise
                                        ? kernels::TakeMode::kRaise
                                        : (std::string(mode) == "wrap" ? kernels::TakeMode::kWrap
                                                                       : kernels::TakeMode::kClip);
        const kernels::TakeLayout l{shape.prod(0, a), shape[a], shape.prod(a + 1, 3),
                                    idx.shape().size()};
        dispatch_dtype(index_type, [&](auto tag) {
          using I = typename decltype(tag)::type;
          const std::vector<I> iv = idx.to_vector<I>();
          std::vector<double> y(static_cast<size_t>(out[0].size()), NAN);
          const std::vector<double> x = data.to_vector<double>();
          for_each_element_host(
              out[0].size(),
              kernels::TakeGather<double, I>{y.data(), x.data(), iv.data(), l, m, OpReq::kWrite});
          check_equal(y, cpu.outputs[0].to_vector<double>(), "forward");
          std::vector<double> dx(static_cast<size_t>(shape.size()), 0.0);
          const std::vector<double> gv = g.to_vector<double>();
          for_each_element_host(out[0].size(), kernels::TakeScatterAdd<double, I>{
                                                   dx.data(), gv.data(), iv.data(), l, m});
          check_equal(dx, cpu.grads[0].to_vector<double>(), "backward", 1e-12);
          check_equal(as_doubles(cpu.grads[1]), std::vector<double>(v.size(), 0.0),
                      "gradient of the indices");
          // Raise mode's check passes the indices it kept (those in range).
          int bad = 0;
          for_each_element_host(l.count, kernels::TakeCheck<I>{iv.data(), l.size, &bad});
          CHECK(bad == (raise ? 0 : 1));
        });
      }
    }
  }
  // The raise check flags values outside [0, size - 1], fractions above it included.
  const std::vector<float> out_of_range = {0, 2.5f};
  int bad = 0;
  for_each_element_host(2, kernels::TakeCheck<float>{out_of_range.data(), 3, &bad});
  CHECK(bad == 1);
}

TEST_CASE("gather_nd: the GPU's gather, check and scatter-add match the CPU operator") {
  const Shape shape{3, 4, 2};
  const NDArray data = doubles(shape, random_values(shape.size(), -1, 1, 4));
  struct Case {
    Shape indices;
    std::vector<double> values;
  };
  const std::vector<Case> cases = {
      {Shape{1, 4}, {0, -1, 2, -3}},
      {Shape{2, 3}, {0, 2, -1, 3, -4, 1}},
      {Shape{3, 2, 2}, {0, 1, 2, -3, 3, 0, -4, 1, 1, 0, -1, -2}},
      {Shape{2, 5}, {1, 1, 1, 0, 2, 2, 2, 2, 3, 1}},  // repeated positions add up
  };
  for (const Case& c : cases) {
    CAPTURE(c.indices);
    const NDArray idx = doubles(c.indices, c.values);
    kernels::GatherNdLayout l;
    l.m = static_cast<int>(c.indices[0]);
    l.count = c.indices.prod(1, c.indices.ndim());
    l.inner = shape.prod(l.m, 3);
    for (int a = 0; a < l.m; ++a) {
      l.sizes[a] = shape[a];
      l.strides[a] = shape.prod(a + 1, 3);
    }
    const int64_t n = l.count * l.inner;
    const NDArray g = doubles({n}, random_values(n, -1, 1, 5));
    CpuRun cpu = run_cpu("gather_nd", {}, {data, idx}, {});
    NDArray g_shaped =
        ready(op::invoke("Reshape", {g}, {{"shape", cpu.outputs[0].shape().to_string()}})[0]);
    cpu = run_cpu("gather_nd", {}, {data, idx}, {g_shaped});
    const std::vector<double> x = data.to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> y(static_cast<size_t>(n), NAN);
    for_each_element_host(n, kernels::GatherNd<double, double>{y.data(), x.data(), c.values.data(),
                                                               l, OpReq::kWrite});
    check_equal(y, cpu.outputs[0].to_vector<double>(), "forward");
    std::vector<double> dx(static_cast<size_t>(shape.size()), 0.0);
    for_each_element_host(
        n, kernels::GatherNdScatterAdd<double, double>{dx.data(), gv.data(), c.values.data(), l});
    check_equal(dx, cpu.grads[0].to_vector<double>(), "backward", 1e-12);
    int bad = 0;
    for_each_element_host(static_cast<int64_t>(c.values.size()),
                          kernels::GatherNdCheck<double>{c.values.data(), l, &bad});
    CHECK(bad == 0);
  }
  kernels::GatherNdLayout l;
  l.m = 2;
  l.count = 2;
  l.sizes[0] = 3;
  l.sizes[1] = 4;
  for (const std::vector<double>& wrong :
       {std::vector<double>{3, 0, 0, 0}, std::vector<double>{0, 0, -5, 0},
        std::vector<double>{0, 0, 3.5, 0}}) {
    int bad = 0;
    for_each_element_host(4, kernels::GatherNdCheck<double>{wrong.data(), l, &bad});
    CHECK(bad == 1);
  }
}

TEST_CASE("where: the GPU's select and gradients match the CPU operator") {
  const Shape shape{3, 4};
  const NDArray x = doubles(shape, random_values(12, -1, 1, 6));
  const NDArray y = doubles(shape, random_values(12, -1, 1, 7));
  const NDArray g = doubles(shape, random_values(12, -1, 1, 8));
  const std::vector<NDArray> conditions = {
      doubles(shape, {0, 1, -2, NAN, 0, 0, 3, 0.5, 0, 1, 0, 1}),
      doubles({3}, {1, 0, 2}),
      ready(NDArray::from_vector<int32_t>({3}, {0, 5, 0})),
  };
  for (const NDArray& cond : conditions) {
    CAPTURE(cond.shape());
    const CpuRun cpu = run_cpu("where", {}, {cond, x, y}, {g});
    const int64_t inner = cond.size() == x.size() ? 1 : 4;
    dispatch_dtype(cond.dtype(), [&](auto tag) {
      using C = typename decltype(tag)::type;
      const std::vector<C> cv = cond.to_vector<C>();
      const std::vector<double> xv = x.to_vector<double>(), yv = y.to_vector<double>(),
                                gv = g.to_vector<double>();
      std::vector<double> out(12, NAN), dx(12, NAN), dy(12, NAN);
      for_each_element_host(12, kernels::WhereSelect<double, C>{out.data(), cv.data(), xv.data(),
                                                                yv.data(), inner, OpReq::kWrite});
      for_each_element_host(12, kernels::WhereGrad<double, C>{dx.data(), gv.data(), cv.data(),
                                                              inner, true, OpReq::kWrite});
      for_each_element_host(12, kernels::WhereGrad<double, C>{dy.data(), gv.data(), cv.data(),
                                                              inner, false, OpReq::kWrite});
      check_equal(out, cpu.outputs[0].to_vector<double>(), "forward");
      check_equal(dx, cpu.grads[1].to_vector<double>(), "gradient of x");
      check_equal(dy, cpu.grads[2].to_vector<double>(), "gradient of y");
    });
  }
}

TEST_CASE("_arange, _ones: the GPU's functors match the CPU operators in every dtype") {
  const std::vector<AttrMap> ranges = {
      {{"start", "2"}, {"stop", "9"}},
      {{"start", "1"}, {"stop", "-2"}, {"step", "-0.7"}, {"repeat", "2"}},
      {{"start", "-2.5"}, {"stop", "3"}, {"step", "1.5"}},
      {{"start", "250"}, {"stop", "262"}, {"step", "3"}},
      {{"start", "16777215"}, {"stop", "16777219"}},
  };
  for (const char* dtype : {"float32", "float64", "float16", "uint8", "int32", "int8", "int64"}) {
    for (AttrMap attrs : ranges) {
      attrs["dtype"] = dtype;
      const std::string dtype_text = dtype, start = attrs["start"];
      CAPTURE(dtype_text);
      CAPTURE(start);
      const NDArray want = run_cpu("_arange", attrs, {}).outputs[0];
      const OpInstance op("_arange", attrs);
      const double first = std::stod(start);
      const double step = attrs.count("step") ? std::stod(attrs["step"]) : 1.0;
      const int64_t repeat = attrs.count("repeat") ? std::stoll(attrs["repeat"]) : 1;
      dispatch_dtype(want.dtype(), [&](auto tag) {
        using T = typename decltype(tag)::type;
        std::vector<T> got(static_cast<size_t>(want.size()));
        for_each_element_host(
            want.size(), kernels::ArangeFill<T>{got.data(), first, step, repeat, OpReq::kWrite});
        const std::vector<T> expected = want.to_vector<T>();
        CHECK(std::memcmp(got.data(), expected.data(), got.size() * sizeof(T)) == 0);
        std::vector<T> ones(3);
        for_each_element_host(3, kernels::FillValue<T>{ones.data(), 1.0, OpReq::kWrite});
        const NDArray cpu_ones =
            run_cpu("_ones", {{"shape", "(3,)"}, {"dtype", dtype}}, {}).outputs[0];
        CHECK(as_doubles(cpu_ones) == std::vector<double>{1, 1, 1});
        CHECK(kernels::convert_value<double>(ones[2]) == 1.0);
      });
    }
  }
}

TEST_CASE("topk: the GPU's rounds of block picks match the CPU operator") {
  struct Case {
    Shape shape;
    AttrMap attrs;
  };
  const std::vector<Case> cases = {
      {Shape{3, 7}, {{"k", "3"}, {"ret_typ", "both"}}},
      {Shape{3, 7}, {{"k", "0"}, {"ret_typ", "both"}, {"is_ascend", "True"}}},
      {Shape{4, 3, 5}, {{"k", "2"}, {"axis", "1"}, {"ret_typ", "both"}}},
      {Shape{2, 3, 4}, {{"k", "5"}, {"axis", "None"}, {"ret_typ", "both"}, {"dtype", "int32"}}},
      {Shape{2, 300}, {{"k", "40"}, {"ret_typ", "both"}}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.shape);
    // Few distinct values: many ties, broken by the lower index.
    std::vector<double> v = random_values(c.shape.size(), 0, 5, 9);
    for (double& e : v) e = std::floor(e);
    v[3] = NAN;
    const NDArray x = doubles(c.shape, v);
    const CpuRun cpu = run_cpu("topk", c.attrs, {x});
    AttrMap mask_attrs = c.attrs;
    mask_attrs["ret_typ"] = "mask";
    const NDArray mask_want = run_cpu("topk", mask_attrs, {x}).outputs[0];
    const OpInstance op("topk", c.attrs);
    kernels::TopKGeometry geo;
    if (c.attrs.count("axis") && c.attrs.at("axis") == "None") {
      geo.n = c.shape.size();
    } else {
      const int axis = c.attrs.count("axis") ? std::stoi(c.attrs.at("axis")) : c.shape.ndim() - 1;
      geo.outer = c.shape.prod(0, axis);
      geo.n = c.shape[axis];
      geo.inner = c.shape.prod(axis + 1, c.shape.ndim());
    }
    geo.k = std::stoll(c.attrs.at("k")) <= 0 ? geo.n : std::stoll(c.attrs.at("k"));
    const bool ascend = c.attrs.count("is_ascend") > 0;
    const int64_t n_out = geo.rows() * geo.k;
    for (int threads : {1, 4, 32, 256}) {
      CAPTURE(threads);
      std::vector<double> values(static_cast<size_t>(n_out), NAN), mask(v.size(), 0.0);
      std::vector<double> indices(values);
      kernels::TopKOutputs<double, double> out;
      out.values = values.data();
      out.indices = indices.data();
      out.mask = mask.data();
      out.values_req = out.indices_req = out.mask_req = OpReq::kWrite;
      const kernels::TopKRows<double, double> f{v.data(), geo.n, geo.inner, geo.k, ascend, out};
      // topk_kernel of ordering_gpu.cu with `threads` threads.
      std::vector<kernels::TopKPick<double>> picks(static_cast<size_t>(threads));
      for (int64_t row = 0; row < geo.rows(); ++row) {
        kernels::TopKPick<double> prev{v[0], -1};
        for (int64_t r = 0; r < geo.k; ++r) {
          for (int t = 0; t < threads; ++t)
            picks[static_cast<size_t>(t)] = f.next(row, t, threads, prev);
          for (int stride = threads / 2; stride > 0; stride /= 2)
            for (int t = 0; t < stride; ++t)
              picks[static_cast<size_t>(t)] =
                  f.first(picks[static_cast<size_t>(t)], picks[static_cast<size_t>(t + stride)]);
          prev = picks[0];
          f.write(row, r, prev);
        }
      }
      check_equal(values, as_doubles(cpu.outputs[0]), "values");
      check_equal(indices, as_doubles(cpu.outputs[1]), "indices");
      check_equal(mask, as_doubles(mask_want), "mask");
    }
    // The gradient's scatter.
    const std::vector<double> g = random_values(n_out, -1, 1, 10);
    const std::vector<double> idx = as_doubles(cpu.outputs[1]);
    std::vector<double> dx(v.size(), 0.0);
    for_each_element_host(
        n_out, kernels::TopKScatter<double, double>{dx.data(), g.data(), idx.data(), geo.n,
                                                    geo.inner, geo.k, OpReq::kWrite});
    AttrMap value_attrs = c.attrs;
    value_attrs["ret_typ"] = "value";
    const CpuRun grad = run_cpu("topk", value_attrs, {x}, {doubles(cpu.outputs[0].shape(), g)});
    check_equal(dx, grad.grads[0].to_vector<double>(), "backward");
  }
}

TEST_CASE("norm: the GPU's serial and block reductions and its gradient match the CPU operator") {
  const Shape shape{3, 40, 5};
  std::vector<double> x = random_values(shape.size(), -2, 2, 11);
  for (int i = 0; i < 5; ++i) x[static_cast<size_t>(i)] = 0;  // a zero norm (ord 2) on axis 2
  const NDArray data = doubles(shape, x);
  for (int ord : {1, 2}) {
    for (const std::vector<bool>& reduced :
         {std::vector<bool>{true, true, true}, std::vector<bool>{false, true, false},
          std::vector<bool>{false, false, true}, std::vector<bool>{true, false, true}}) {
      Shape small = shape;
      std::string axes = "(";
      for (int i = 0; i < 3; ++i)
        if (reduced[static_cast<size_t>(i)]) {
          small[i] = 1;
          axes += std::to_string(i) + ",";
        }
      axes += ")";
      CAPTURE(ord);
      CAPTURE(axes);
      const AttrMap attrs{{"ord", std::to_string(ord)}, {"axis", axes}, {"keepdims", "True"}};
      const NDArray g = doubles(small, random_values(small.size(), -1, 1, 12));
      const CpuRun cpu = run_cpu("norm", attrs, {data}, {g});
      const op::ReduceIndex index = op::make_reduce_index(shape, small);
      for (int threads : {0, 1, 32, 256}) {
        CAPTURE(threads);
        std::vector<double> out(static_cast<size_t>(small.size()), NAN);
        auto reduce = [&](const auto& reducer) {
          using R = std::decay_t<decltype(reducer)>;
          if (threads == 0) {
            for_each_element_host(index.out_size,
                                  op::ReduceSerialKernel<double, R>{index, reducer, x.data(),
                                                                    out.data(), OpReq::kWrite});
            return;
          }
          const op::ReduceBlockKernel<double, R> block{index, reducer, x.data(), out.data(),
                                                       OpReq::kWrite};
          std::vector<double> partials(static_cast<size_t>(threads));
          for (int64_t o = 0; o < index.out_size; ++o) {
            for (int t = 0; t < threads; ++t)
              partials[static_cast<size_t>(t)] = block.partial(o, t, threads);
            for (int stride = threads / 2; stride > 0; stride /= 2)
              for (int t = 0; t < stride; ++t) block.combine(partials.data(), t, stride);
            block.write(o, partials[0]);
          }
        };
        if (ord == 1)
          reduce(op::NormReducer<double, 1>{});
        else
          reduce(op::NormReducer<double, 2>{});
        check_equal(out, cpu.outputs[0].to_vector<double>(), "forward", 1e-12);
      }
      const std::vector<double> y = cpu.outputs[0].to_vector<double>(), gv = g.to_vector<double>();
      std::vector<double> dx(x.size(), NAN);
      for_each_element_host(
          shape.size(),
          op::NormGradKernel<double>{op::BroadcastLayout<1>(shape, {small}), ord, gv.data(),
                                     x.data(), y.data(), dx.data(), OpReq::kWrite});
      check_equal(dx, cpu.grads[0].to_vector<double>(), "backward", 1e-12);
    }
  }
}
