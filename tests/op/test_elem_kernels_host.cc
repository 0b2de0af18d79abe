// The GPU kernels' per-element and per-block logic of the element-wise,
// broadcast and reduction operators (tensor/*_kernels.h), run on the CPU
// over the index spaces the CUDA kernels use, against the CPU operators
// through op::invoke. The block reductions are emulated thread by thread.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"
#include "op/host_launch.h"
#include "op/invoke.h"
#include "op/tensor/broadcast_util.h"
#include "op/tensor/elemwise_kernels.h"
#include "op/tensor/reduce_kernels.h"

using namespace mx;
using namespace mx::op;

namespace {

template <typename T>
std::vector<T> random_values(int64_t n, double lo, double hi, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

// Small integers as floating values: max/min and argmax then have ties.
template <typename T>
std::vector<T> random_ints(int64_t n, int hi, uint64_t seed) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int> dist(0, hi);
  std::vector<T> v(static_cast<size_t>(n));
  for (T& x : v) x = static_cast<T>(dist(gen));
  return v;
}

template <typename T>
NDArray array(const Shape& shape, const std::vector<T>& values) {
  return NDArray::from_vector(shape, values);
}

// Relative tolerance of a comparison: the CPU's float32 vmath paths and the
// order of long sums differ from the functors' in the last bits.
template <typename T>
double tolerance() {
  return std::is_same_v<T, float> ? 2e-5 : 1e-12;
}

template <typename T>
void check_close(const std::vector<T>& got, const std::vector<T>& want, const std::string& what,
                 double tol = tolerance<T>()) {
  REQUIRE_MESSAGE(got.size() == want.size(), what);
  int bad = 0;
  size_t first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double a = static_cast<double>(got[i]), b = static_cast<double>(want[i]);
    const bool same = (std::isnan(a) && std::isnan(b)) || a == b ||
                      std::abs(a - b) <= tol * std::max({1.0, std::abs(a), std::abs(b)});
    if (!same && bad++ == 0) first = i;
  }
  CHECK_MESSAGE(bad == 0, what, ": ", bad, " of ", got.size(), " differ, first at ", first, ": ",
                (bad ? static_cast<double>(got[first]) : 0.0), " vs ",
                (bad ? static_cast<double>(want[first]) : 0.0));
}

// The CPU operator's forward output 0 and its input gradients for out_grad
// (req kWrite).
struct CpuResult {
  NDArray output;
  std::vector<NDArray> grads;
};
CpuResult run_cpu(const std::string& op, const AttrMap& attrs, const std::vector<NDArray>& inputs,
                  const NDArray& out_grad) {
  const OpInstance inst(op, attrs);
  std::vector<NDArray> outputs = invoke(inst, inputs, {}, true);
  CpuResult r{outputs[0], {}};
  if (out_grad.is_none()) return r;
  for (const NDArray& in : inputs)
    r.grads.push_back(NDArray::zeros(in.shape(), in.ctx(), in.dtype()));
  invoke_backward(inst, {out_grad}, inputs, outputs, {}, r.grads,
                  std::vector<OpReq>(inputs.size(), OpReq::kWrite));
  return r;
}

// kAdd onto `base` must give base + the kWrite result.
template <typename T>
std::vector<T> plus(const std::vector<T>& base, const std::vector<T>& v) {
  std::vector<T> r(base.size());
  for (size_t i = 0; i < r.size(); ++i) r[i] = base[i] + v[i];
  return r;
}

// The GPU's reduction of index (reduce_gpu.cu): serial with threads == 0,
// else emulated blocks of `threads`, `parts` per output (more than one: each
// block takes every parts-th run of `threads` elements and the parts are
// merged in order, as split_reduce does).
template <typename T, typename R>
void host_reduce(const ReduceIndex& index, const R& reducer, const T* in, T* out, OpReq req,
                 int threads, int64_t parts = 1) {
  if (req == OpReq::kNull || index.out_size == 0) return;
  if (threads == 0) {
    for_each_element_host(index.out_size, ReduceSerialKernel<T, R>{index, reducer, in, out, req});
    return;
  }
  const ReduceBlockKernel<T, R> block{index, reducer, in, out, req};
  std::vector<typename R::Acc> partials(static_cast<size_t>(threads));
  for (int64_t o = 0; o < index.out_size; ++o) {
    typename R::Acc total{};
    for (int64_t part = 0; part < parts; ++part) {
      for (int t = 0; t < threads; ++t)
        partials[static_cast<size_t>(t)] =
            parts == 1 ? block.partial(o, t, threads)
                       : block.partial_from(o, part * threads + t, parts * threads);
      for (int stride = threads / 2; stride > 0; stride /= 2)
        for (int t = 0; t < stride; ++t) block.combine(partials.data(), t, stride);
      if (part == 0)
        total = partials[0];
      else
        reducer.merge(total, partials[0]);
    }
    block.write(o, total);
  }
}

const int kThreadChoices[] = {0, 1, 32, 256};

}  // namespace

// ---- element-wise ------------------------------------------------------------

TEST_CASE_TEMPLATE("unary functors match the CPU operators", T, float, double) {
  struct Case {
    const char* op;
    Unary kind;
    double lo, hi;
  };
  const Case cases[] = {{"relu", Unary::kRelu, -2, 2},
                        {"sigmoid", Unary::kSigmoid, -6, 6},
                        {"tanh", Unary::kTanh, -3, 3},
                        {"exp", Unary::kExp, -4, 4},
                        {"log", Unary::kLog, 0.1, 5},
                        {"sqrt", Unary::kSqrt, 0.1, 5},
                        {"square", Unary::kSquare, -3, 3},
                        {"abs", Unary::kAbs, -3, 3},
                        {"negative", Unary::kNegative, -3, 3},
                        {"reciprocal", Unary::kReciprocal, 0.2, 4},
                        {"_copy", Unary::kIdentity, -3, 3},
                        {"erf", Unary::kErf, -3, 3},
                        {"logical_not", Unary::kLogicalNot, -1, 1}};
  const Shape shape{7, 129};  // more than one vmath block
  const int64_t n = shape.size();
  for (const Case& c : cases) {
    CAPTURE(c.op);
    const auto x = random_values<T>(n, c.lo, c.hi, 1);
    const auto g = random_values<T>(n, -1, 1, 2);
    const auto base = random_values<T>(n, -1, 1, 3);
    const CpuResult cpu = run_cpu(c.op, {}, {array(shape, x)}, array(shape, g));
    const auto y = cpu.output.to_vector<T>();
    std::vector<T> out(base);
    for_each_element_host(n, UnaryForwardKernel<T>{c.kind, x.data(), out.data(), OpReq::kWrite});
    check_close(out, y, "forward");
    out = base;
    for_each_element_host(n, UnaryForwardKernel<T>{c.kind, x.data(), out.data(), OpReq::kAdd});
    check_close(out, plus(base, y), "forward kAdd");
    out = base;
    for_each_element_host(n, UnaryForwardKernel<T>{c.kind, x.data(), out.data(), OpReq::kNull});
    CHECK(out == base);
    std::vector<T> dx(static_cast<size_t>(n));
    for_each_element_host(
        n, UnaryBackwardKernel<T>{c.kind, g.data(), x.data(), y.data(), dx.data(), OpReq::kWrite});
    check_close(dx, cpu.grads[0].to_vector<T>(), "backward");
    // In place: the output is the input's memory.
    std::vector<T> in_place(x);
    for_each_element_host(
        n, UnaryForwardKernel<T>{c.kind, in_place.data(), in_place.data(), OpReq::kInplace});
    check_close(in_place, y, "in place");
  }
}

TEST_CASE_TEMPLATE("scalar functors match the CPU operators", T, float, double) {
  struct Case {
    const char* op;
    WithScalar kind;
  };
  const Case cases[] = {{"_plus_scalar", WithScalar::kPlus},
                        {"_minus_scalar", WithScalar::kMinus},
                        {"_rminus_scalar", WithScalar::kRMinus},
                        {"_mul_scalar", WithScalar::kMul},
                        {"_div_scalar", WithScalar::kDiv},
                        {"_rdiv_scalar", WithScalar::kRDiv},
                        {"_power_scalar", WithScalar::kPower},
                        {"_rpower_scalar", WithScalar::kRPower},
                        {"_maximum_scalar", WithScalar::kMaximum},
                        {"_minimum_scalar", WithScalar::kMinimum},
                        // Comparisons and logical operators: their backward on either device
                        // writes zeros without these functors (whose derivative is 0 too).
                        {"_equal_scalar", WithScalar::kEqual},
                        {"_not_equal_scalar", WithScalar::kNotEqual},
                        {"_greater_scalar", WithScalar::kGreater},
                        {"_greater_equal_scalar", WithScalar::kGreaterEqual},
                        {"_lesser_scalar", WithScalar::kLesser},
                        {"_lesser_equal_scalar", WithScalar::kLesserEqual},
                        {"_logical_and_scalar", WithScalar::kLogicalAnd},
                        {"_logical_or_scalar", WithScalar::kLogicalOr},
                        {"_logical_xor_scalar", WithScalar::kLogicalXor}};
  const Shape shape{5, 41};
  const int64_t n = shape.size();
  const double s = 1.7;
  for (const Case& c : cases) {
    CAPTURE(c.op);
    const auto x = random_values<T>(n, 0.2, 3, 4);
    const auto g = random_values<T>(n, -1, 1, 5);
    const CpuResult cpu = run_cpu(c.op, {{"scalar", "1.7"}}, {array(shape, x)}, array(shape, g));
    const auto y = cpu.output.to_vector<T>();
    std::vector<T> out(static_cast<size_t>(n));
    for_each_element_host(
        n, ScalarForwardKernel<T>{c.kind, static_cast<T>(s), x.data(), out.data(), OpReq::kWrite});
    check_close(out, y, "forward");
    std::vector<T> dx(static_cast<size_t>(n));
    for_each_element_host(n, ScalarBackwardKernel<T>{c.kind, static_cast<T>(s), g.data(), x.data(),
                                                     y.data(), dx.data(), OpReq::kWrite});
    check_close(dx, cpu.grads[0].to_vector<T>(), "backward");
  }
}

template <Binary K, typename T>
void check_binary(const char* op) {
  CAPTURE(op);
  const Shape shape{3, 77};
  const int64_t n = shape.size();
  const auto a = random_values<T>(n, -3, 3, 6);
  const auto b = random_values<T>(n, 0.5, 3, 7);
  const auto g = random_values<T>(n, -1, 1, 8);
  const CpuResult cpu = run_cpu(op, {}, {array(shape, a), array(shape, b)}, array(shape, g));
  std::vector<T> out(static_cast<size_t>(n));
  for_each_element_host(n,
                        BinaryForwardKernel<K, T>{a.data(), b.data(), out.data(), OpReq::kWrite});
  check_close(out, cpu.output.to_vector<T>(), "forward");
  for (int side = 0; side < 2; ++side) {
    const bool reads = K == Binary::kMul || K == Binary::kDiv;
    std::vector<T> grad(static_cast<size_t>(n));
    for_each_element_host(n, BinaryBackwardKernel<K, T>{g.data(), reads ? a.data() : nullptr,
                                                        reads ? b.data() : nullptr, grad.data(),
                                                        OpReq::kWrite, side});
    check_close(grad, cpu.grads[static_cast<size_t>(side)].to_vector<T>(),
                side == 0 ? "lhs gradient" : "rhs gradient");
  }
}

TEST_CASE_TEMPLATE("binary functors match the CPU operators", T, float, double) {
  check_binary<Binary::kAdd, T>("elemwise_add");
  check_binary<Binary::kSub, T>("elemwise_sub");
  check_binary<Binary::kMul, T>("elemwise_mul");
  check_binary<Binary::kDiv, T>("elemwise_div");
  check_binary<Binary::kEqual, T>("_equal");
  check_binary<Binary::kNotEqual, T>("_not_equal");
  check_binary<Binary::kGreater, T>("_greater");
  check_binary<Binary::kGreaterEqual, T>("_greater_equal");
  check_binary<Binary::kLesser, T>("_lesser");
  check_binary<Binary::kLesserEqual, T>("_lesser_equal");
  check_binary<Binary::kLogicalAnd, T>("_logical_and");
  check_binary<Binary::kLogicalOr, T>("_logical_or");
  check_binary<Binary::kLogicalXor, T>("_logical_xor");
}

TEST_CASE_TEMPLATE("clip, add_n, BlockGrad, zeros_like, ones_like functors", T, float, double) {
  const Shape shape{4, 33};
  const int64_t n = shape.size();
  const auto x = random_values<T>(n, -1, 1, 9);
  const auto g = random_values<T>(n, -1, 1, 10);
  {
    const CpuResult cpu =
        run_cpu("clip", {{"a_min", "-0.3"}, {"a_max", "0.45"}}, {array(shape, x)}, array(shape, g));
    const T lo = static_cast<T>(-0.3f), hi = static_cast<T>(0.45f);  // the parameters are float
    std::vector<T> out(static_cast<size_t>(n)), dx(static_cast<size_t>(n));
    for_each_element_host(n, ClipForwardKernel<T>{lo, hi, x.data(), out.data(), OpReq::kWrite});
    check_close(out, cpu.output.to_vector<T>(), "clip forward", 0);
    for_each_element_host(
        n, ClipBackwardKernel<T>{lo, hi, g.data(), x.data(), dx.data(), OpReq::kWrite});
    check_close(dx, cpu.grads[0].to_vector<T>(), "clip backward", 0);
  }
  // add_n over one chunk, exactly one, and several (the GPU launches per chunk).
  for (int count : {1, 3, kAddNChunk, kAddNChunk + 1, 2 * kAddNChunk + 3}) {
    CAPTURE(count);
    std::vector<std::vector<T>> xs;
    std::vector<NDArray> inputs;
    for (int k = 0; k < count; ++k) {
      xs.push_back(random_values<T>(n, -1, 1, 100 + static_cast<uint64_t>(k)));
      inputs.push_back(array(shape, xs.back()));
    }
    const CpuResult cpu =
        run_cpu("add_n", {{"num_args", std::to_string(count)}}, inputs, array(shape, g));
    for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
      const auto base = random_values<T>(n, -1, 1, 11);
      std::vector<T> out(base);
      std::vector<const T*> ptrs;
      for (const auto& v : xs) ptrs.push_back(v.data());
      for (const AddNKernel<T>& f : add_n_chunks(ptrs, out.data(), req, "add_n"))
        for_each_element_host(n, f);
      const auto want = cpu.output.to_vector<T>();
      // With kWrite the sums run in the CPU's order.
      check_close(out, req == OpReq::kAdd ? plus(base, want) : want, "add_n",
                  req == OpReq::kAdd ? tolerance<T>() : 0);
    }
    for (int k = 0; k < count; ++k) {
      std::vector<T> dx(static_cast<size_t>(n));
      for_each_element_host(n, CopyKernel<T>{g.data(), dx.data(), OpReq::kWrite});
      check_close(dx, cpu.grads[static_cast<size_t>(k)].to_vector<T>(), "add_n gradient", 0);
    }
  }
  // The output may be some of the inputs' arrays (as on the CPU, which reads
  // an element's inputs before writing it): each launch after the first
  // reads the running sum in out, so the inputs that are out go first.
  for (int count : {3, kAddNChunk + 3, 2 * kAddNChunk + 1}) {
    for (const std::vector<int>& aliased :
         {std::vector<int>{0}, std::vector<int>{count - 1}, std::vector<int>{1, count - 1}}) {
      CAPTURE(count);
      CAPTURE(aliased.back());
      std::vector<std::vector<T>> xs;
      std::vector<NDArray> inputs;
      // The aliased inputs hold one array's values, as they would.
      const auto shared = random_values<T>(n, -1, 1, 300);
      for (int k = 0; k < count; ++k) {
        const bool is_out = std::count(aliased.begin(), aliased.end(), k) > 0;
        xs.push_back(is_out ? shared : random_values<T>(n, -1, 1, 200 + static_cast<uint64_t>(k)));
        inputs.push_back(array(shape, xs.back()));
      }
      const CpuResult cpu =
          run_cpu("add_n", {{"num_args", std::to_string(count)}}, inputs, NDArray());
      for (OpReq req : {OpReq::kWrite, OpReq::kAdd}) {
        std::vector<T> out(shared);
        std::vector<const T*> ptrs;
        for (int k = 0; k < count; ++k)
          ptrs.push_back(std::count(aliased.begin(), aliased.end(), k) > 0
                             ? out.data()
                             : xs[static_cast<size_t>(k)].data());
        for (const AddNKernel<T>& f : add_n_chunks(ptrs, out.data(), req, "add_n"))
          for_each_element_host(n, f);
        const auto want = cpu.output.to_vector<T>();
        check_close(out, req == OpReq::kAdd ? plus(shared, want) : want, "add_n into an input");
      }
    }
  }
  {
    std::vector<T> out(static_cast<size_t>(n));
    const std::vector<const T*> ptrs(kAddNChunk + 1, out.data());
    CHECK_THROWS_WITH_AS(add_n_chunks(ptrs, out.data(), OpReq::kWrite, "add_n"),
                         doctest::Contains("at most"), Error);
  }
  for (const char* op : {"BlockGrad", "zeros_like", "ones_like"}) {
    CAPTURE(op);
    const CpuResult cpu = run_cpu(op, {}, {array(shape, x)}, array(shape, g));
    std::vector<T> out(static_cast<size_t>(n));
    if (std::string(op) == "BlockGrad")
      for_each_element_host(n, CopyKernel<T>{x.data(), out.data(), OpReq::kWrite});
    else
      for_each_element_host(
          n, FillKernel<T>{T(std::string(op) == "ones_like" ? 1 : 0), out.data(), OpReq::kWrite});
    check_close(out, cpu.output.to_vector<T>(), "forward", 0);
    std::vector<T> dx(static_cast<size_t>(n), T(5));
    for_each_element_host(n, FillKernel<T>{T(0), dx.data(), OpReq::kWrite});
    check_close(dx, cpu.grads[0].to_vector<T>(), "gradient", 0);
  }
}

// ---- broadcasting --------------------------------------------------------------

namespace {

// Every pattern of broadcasting over `dims`: per axis, lhs and rhs each full
// or 1; rhs_rank < dims.size() also drops rhs's leading axes.
std::vector<std::pair<Shape, Shape>> broadcast_cases(const std::vector<int64_t>& dims) {
  std::vector<std::pair<Shape, Shape>> cases;
  const size_t nd = dims.size();
  for (uint32_t mask = 0; mask < (1u << (2 * nd)); ++mask) {
    std::vector<int64_t> l, r;
    for (size_t i = 0; i < nd; ++i) {
      l.push_back((mask >> (2 * i)) & 1u ? 1 : dims[i]);
      r.push_back((mask >> (2 * i + 1)) & 1u ? 1 : dims[i]);
    }
    cases.emplace_back(Shape(l), Shape(r));
    // rhs with its leading axes removed (NumPy's alignment to the right).
    if (nd > 1) cases.emplace_back(Shape(l), Shape(std::vector<int64_t>(r.begin() + 1, r.end())));
  }
  return cases;
}

Shape broadcast_shape(const Shape& l, const Shape& r) {
  const int nd = std::max(l.ndim(), r.ndim());
  const Shape pl = pad_left(l, nd), pr = pad_left(r, nd);
  std::vector<int64_t> o;
  for (int i = 0; i < nd; ++i) o.push_back(pl[i] == 1 ? pr[i] : pl[i]);
  return Shape(o);
}

}  // namespace

TEST_CASE_TEMPLATE("broadcast functors match the CPU operators on every axis pattern", T, float,
                   double) {
  struct Case {
    const char* op;
    BroadcastKind kind;
  };
  const Case ops[] = {{"broadcast_add", BroadcastKind::kAdd},
                      {"broadcast_sub", BroadcastKind::kSub},
                      {"broadcast_mul", BroadcastKind::kMul},
                      {"broadcast_div", BroadcastKind::kDiv},
                      {"broadcast_maximum", BroadcastKind::kMaximum},
                      {"broadcast_minimum", BroadcastKind::kMinimum},
                      {"broadcast_equal", BroadcastKind::kEqual},
                      {"broadcast_not_equal", BroadcastKind::kNotEqual},
                      {"broadcast_greater", BroadcastKind::kGreater},
                      {"broadcast_greater_equal", BroadcastKind::kGreaterEqual},
                      {"broadcast_lesser", BroadcastKind::kLesser},
                      {"broadcast_lesser_equal", BroadcastKind::kLesserEqual},
                      {"broadcast_logical_and", BroadcastKind::kLogicalAnd},
                      {"broadcast_logical_or", BroadcastKind::kLogicalOr},
                      {"broadcast_logical_xor", BroadcastKind::kLogicalXor}};
  std::vector<std::pair<Shape, Shape>> cases;
  for (const auto& dims : std::vector<std::vector<int64_t>>{{5}, {3, 4}, {2, 3, 5}, {2, 3, 2, 3}})
    for (const auto& c : broadcast_cases(dims)) cases.push_back(c);
  cases.emplace_back(Shape{130, 70}, Shape{1, 70});    // long sums: the block reduction
  cases.emplace_back(Shape{2, 0, 3}, Shape{1, 1, 3});  // empty
  uint64_t seed = 20;
  for (const Case& op : ops) {
    for (const auto& [ls, rs] : cases) {
      CAPTURE(op.op);
      CAPTURE(ls);
      CAPTURE(rs);
      const Shape os = broadcast_shape(ls, rs);
      // Integers for max/min so that ties (which go to lhs) occur, and for
      // the comparisons (ties) and logical operators (zeros).
      const bool integers = op.kind == BroadcastKind::kMaximum ||
                            op.kind == BroadcastKind::kMinimum || is_logic(op.kind);
      const auto a = integers ? random_ints<T>(ls.size(), 3, ++seed)
                              : random_values<T>(ls.size(), -2, 2, ++seed);
      const auto b = integers ? random_ints<T>(rs.size(), 3, ++seed)
                              : random_values<T>(rs.size(), 0.5, 2, ++seed);
      const auto g = random_values<T>(os.size(), -1, 1, ++seed);
      const CpuResult cpu = run_cpu(op.op, {}, {array(ls, a), array(rs, b)}, array(os, g));
      const BroadcastLayout<2> layout(os, {ls, rs});
      std::vector<T> out(static_cast<size_t>(os.size()));
      for_each_element_host(
          os.size(), BroadcastForwardKernel<T>{layout, op.kind, a.data(), b.data(), out.data(),
                                               OpReq::kWrite});
      check_close(out, cpu.output.to_vector<T>(), "forward", 0);
      // backward as broadcast.cc's backward_gpu, with each reduction path.
      for (int side = 0; side < 2; ++side) {
        const Shape& gs = side == 0 ? ls : rs;
        const ReduceIndex to_grad = make_reduce_index(os, gs);
        const auto want = cpu.grads[static_cast<size_t>(side)].to_vector<T>();
        for (int threads : kThreadChoices) {
          CAPTURE(threads);
          std::vector<T> grad(static_cast<size_t>(gs.size()), T(7));
          if (op.kind == BroadcastKind::kAdd || op.kind == BroadcastKind::kSub) {
            SumReducer<T> sum;
            sum.scale = op.kind == BroadcastKind::kSub && side == 1 ? -1.0 : 1.0;
            host_reduce(to_grad, sum, g.data(), grad.data(), OpReq::kWrite, threads);
          } else {
            std::vector<T> scratch(static_cast<size_t>(os.size()));
            for_each_element_host(os.size(),
                                  BroadcastGradKernel<T>{layout, op.kind, side, g.data(), a.data(),
                                                         b.data(), scratch.data(), OpReq::kWrite});
            host_reduce(to_grad, SumReducer<T>{}, scratch.data(), grad.data(), OpReq::kWrite,
                        threads);
          }
          check_close(grad, want, side == 0 ? "lhs gradient" : "rhs gradient");
        }
      }
    }
  }
}

TEST_CASE("BroadcastIndex maps every output element to its operands' elements") {
  const Shape out{2, 3, 4}, l{2, 1, 4}, r{3, 1};
  const BroadcastLayout<2> layout(out, {l, r});
  for (int64_t i0 = 0; i0 < 2; ++i0)
    for (int64_t i1 = 0; i1 < 3; ++i1)
      for (int64_t i2 = 0; i2 < 4; ++i2) {
        int64_t off[2];
        layout.offsets((i0 * 3 + i1) * 4 + i2, off);
        CHECK(off[0] == i0 * 4 + i2);
        CHECK(off[1] == i1);
      }
}

// ---- reductions ------------------------------------------------------------------

namespace {

std::string axes_text(const std::vector<int>& axes) {
  std::string s = "(";
  for (int a : axes) s += std::to_string(a) + ",";
  return s + ")";
}

}  // namespace

TEST_CASE_TEMPLATE("reduction functors match the CPU operators", T, float, double) {
  struct Case {
    Shape shape;
    std::vector<int> axes;  // empty: all
  };
  std::vector<Case> cases;
  // Every subset of the axes of a 4-d shape.
  const Shape four{3, 4, 2, 5};
  for (uint32_t mask = 0; mask < 16; ++mask) {
    std::vector<int> axes;
    for (int i = 0; i < 4; ++i)
      if ((mask >> i) & 1u) axes.push_back(i);
    cases.push_back({four, axes});
  }
  cases.push_back({Shape{6, 1, 7}, {1}});          // a reduced axis of size 1
  cases.push_back({Shape{1}, {}});                 // one element
  cases.push_back({Shape{4, 0, 3}, {1}});          // nothing to reduce: 0, -inf, inf, NaN
  cases.push_back({Shape{0, 3}, {1}});             // no outputs
  cases.push_back({Shape{20000}, {}});             // large, contiguous
  cases.push_back({Shape{3, 5000}, {1}});          // large rows
  cases.push_back({Shape{3000, 7}, {0}});          // large, strided
  cases.push_back({Shape{2, 300, 3, 4}, {1, 3}});  // large, two axes apart
  struct Op {
    const char* name;
    int kind;  // 0 sum, 1 mean, 2 max, 3 min
  };
  const Op ops[] = {{"sum", 0}, {"mean", 1}, {"max", 2}, {"min", 3}};
  uint64_t seed = 200;
  for (const Case& c : cases) {
    for (bool keepdims : {false, true}) {
      for (bool exclude : {false, true}) {
        if (exclude && c.axes.empty()) continue;
        // The reduced axes and the output's layout (input with 1 on them).
        std::vector<bool> reduced(static_cast<size_t>(c.shape.ndim()), c.axes.empty());
        for (int a : c.axes) reduced[static_cast<size_t>(a)] = true;
        if (exclude) reduced.flip();
        Shape small = c.shape;
        for (int i = 0; i < c.shape.ndim(); ++i)
          if (reduced[static_cast<size_t>(i)]) small[i] = 1;
        AttrMap attrs{{"keepdims", keepdims ? "True" : "False"},
                      {"exclude", exclude ? "True" : "False"}};
        if (!c.axes.empty()) attrs["axis"] = axes_text(c.axes);
        std::vector<int64_t> kept;  // the output's shape without keepdims
        for (int i = 0; i < c.shape.ndim(); ++i)
          if (!reduced[static_cast<size_t>(i)]) kept.push_back(c.shape[i]);
        const Shape dropped = kept.empty() ? Shape{1} : Shape(kept);
        const ReduceIndex index = make_reduce_index(c.shape, small);
        for (const Op& op : ops) {
          CAPTURE(op.name);
          CAPTURE(c.shape);
          CAPTURE(attrs.count("axis") ? attrs["axis"] : "None");
          CAPTURE(keepdims);
          CAPTURE(exclude);
          const bool extremum = op.kind >= 2;
          const auto x = extremum ? random_ints<T>(c.shape.size(), 4, ++seed)
                                  : random_values<T>(c.shape.size(), -1, 1, ++seed);
          const auto g = random_values<T>(small.size(), -1, 1, ++seed);
          const CpuResult cpu =
              run_cpu(op.name, attrs, {array(c.shape, x)}, array(keepdims ? small : dropped, g));
          const auto want = cpu.output.to_vector<T>();
          for (int threads : kThreadChoices) {
            CAPTURE(threads);
            std::vector<T> out(static_cast<size_t>(small.size()), T(9));
            switch (op.kind) {
              case 0:
              case 1: {
                SumReducer<T> sum;
                if (op.kind == 1) sum.scale = 1.0 / static_cast<double>(index.count);
                host_reduce(index, sum, x.data(), out.data(), OpReq::kWrite, threads);
                break;
              }
              case 2:
                host_reduce(index, ExtremumReducer<T, true>{}, x.data(), out.data(), OpReq::kWrite,
                            threads);
                break;
              case 3:
                host_reduce(index, ExtremumReducer<T, false>{}, x.data(), out.data(), OpReq::kWrite,
                            threads);
                break;
            }
            check_close(out, want, "forward", extremum ? 0 : tolerance<T>());
          }
          // Backward as reduce.cc's reduce_backward_gpu.
          const BroadcastLayout<1> layout(c.shape, {small});
          std::vector<T> dx(static_cast<size_t>(c.shape.size()), T(3));
          if (extremum) {
            for_each_element_host(c.shape.size(),
                                  ExtremumGradKernel<T>{layout, g.data(), x.data(), want.data(),
                                                        dx.data(), OpReq::kWrite});
          } else {
            const int64_t count = small.size() == 0 ? 1 : c.shape.size() / small.size();
            const T scale = op.kind == 1 ? T(1) / static_cast<T>(count) : T(1);
            for_each_element_host(c.shape.size(), SpreadGradKernel<T>{layout, scale, g.data(),
                                                                      dx.data(), OpReq::kWrite});
          }
          check_close(dx, cpu.grads[0].to_vector<T>(), "backward", 0);
        }
      }
    }
  }
}

TEST_CASE("reductions: NaN wins max and min in either path, and kAdd adds") {
  const Shape shape{2, 300};
  std::vector<float> x = random_values<float>(shape.size(), -1, 1, 7);
  x[5] = std::nanf("");
  const ReduceIndex index = make_reduce_index(shape, Shape{2, 1});
  for (int threads : kThreadChoices) {
    std::vector<float> out{1, 1};
    host_reduce(index, ExtremumReducer<float, true>{}, x.data(), out.data(), OpReq::kWrite,
                threads);
    CHECK(std::isnan(out[0]));
    CHECK(!std::isnan(out[1]));
    std::vector<float> sum{1, 2};
    host_reduce(index, SumReducer<float>{}, x.data(), sum.data(), OpReq::kAdd, threads);
    double want = 2;
    for (int64_t j = 300; j < 600; ++j) want += x[static_cast<size_t>(j)];
    CHECK(sum[1] == doctest::Approx(want).epsilon(1e-6));
  }
  // The GPU's choice of path.
  CHECK(reduce_block_threads(make_reduce_index(Shape{4, 10}, Shape{4, 1})) == 0);
  CHECK(reduce_block_threads(make_reduce_index(Shape{4, 1000}, Shape{4, 1})) ==
        kReduceBlockThreads);
  CHECK(reduce_block_threads(make_reduce_index(Shape{1000, 5000}, Shape{1, 5000})) == 0);
}

TEST_CASE("reductions to few long outputs: split among blocks, parts merged in order") {
  // sum over everything and over the last axis, max, norm: as split_reduce
  // runs them (reduce_split_parts blocks per output), against the CPU.
  struct Case {
    Shape shape;
    const char* axis;  // nullptr: every axis
  };
  for (const Case& c :
       {Case{{50000}, nullptr}, Case{{3, 20000}, "1"}, Case{{7, 9, 800}, nullptr}}) {
    CAPTURE(c.shape.to_string());
    const AttrMap attrs =
        c.axis ? AttrMap{{"axis", c.axis}, {"keepdims", "True"}} : AttrMap{{"keepdims", "True"}};
    const std::vector<double> x = random_values<double>(c.shape.size(), -1, 1, 99);
    const NDArray in = NDArray::from_vector<double>(c.shape, x);
    for (const char* op : {"sum", "max", "norm"}) {
      CAPTURE(op);
      const NDArray want = run_cpu(op, attrs, {in}, NDArray()).output;
      const ReduceIndex index = make_reduce_index(c.shape, want.shape());
      const int threads = reduce_block_threads(index);
      const int64_t parts = reduce_split_parts(index, threads);
      REQUIRE(parts > 1);
      std::vector<double> out(static_cast<size_t>(want.shape().size()), 9.0);
      if (std::string(op) == "sum")
        host_reduce(index, SumReducer<double>{}, x.data(), out.data(), OpReq::kWrite, threads,
                    parts);
      else if (std::string(op) == "max")
        host_reduce(index, ExtremumReducer<double, true>{}, x.data(), out.data(), OpReq::kWrite,
                    threads, parts);
      else
        host_reduce(index, NormReducer<double, 2>{}, x.data(), out.data(), OpReq::kWrite, threads,
                    parts);
      check_close(out, want.to_vector<double>(), "split", 1e-12);
    }
  }
  // Many outputs, or short ones, keep one block per output.
  CHECK(reduce_split_parts(make_reduce_index(Shape{200, 5000}, Shape{200, 1}), 256) == 1);
  CHECK(reduce_split_parts(make_reduce_index(Shape{4, 1000}, Shape{4, 1}), 256) == 1);
}

// ---- argmax ------------------------------------------------------------------------

TEST_CASE_TEMPLATE("argmax functor matches the CPU operator", T, float, double, half_t, int32_t,
                   uint8_t, int8_t, int64_t) {
  const Shape shape{3, 5, 4};
  std::vector<T> x(static_cast<size_t>(shape.size()));
  std::mt19937_64 gen(31);
  for (T& v : x) v = static_cast<T>(static_cast<float>(gen() % 6));  // ties
  if constexpr (!std::is_integral_v<T>) {
    x[7] = static_cast<T>(std::nanf(""));
    x[40] = static_cast<T>(std::nanf(""));
  }
  for (int axis : {-1, 0, 1, 2}) {
    for (bool keepdims : {false, true}) {
      CAPTURE(axis);
      CAPTURE(keepdims);
      AttrMap attrs{{"keepdims", keepdims ? "True" : "False"}};
      if (axis >= 0) attrs["axis"] = std::to_string(axis);
      const CpuResult cpu = run_cpu("argmax", attrs, {array(shape, x)}, NDArray());
      const int64_t outer = axis >= 0 ? shape.prod(0, axis) : 1;
      const int64_t size = axis >= 0 ? shape[axis] : shape.size();
      const int64_t inner = axis >= 0 ? shape.prod(axis + 1, shape.ndim()) : 1;
      std::vector<T> out(static_cast<size_t>(outer * inner));
      for_each_element_host(outer * inner,
                            ArgmaxKernel<T>{x.data(), out.data(), OpReq::kWrite, size, inner});
      const auto want = cpu.output.template to_vector<T>();
      REQUIRE(out.size() == want.size());
      for (size_t i = 0; i < out.size(); ++i)
        CHECK(static_cast<double>(out[i]) == static_cast<double>(want[i]));
    }
  }
}

TEST_CASE("argmax over an axis of arrays with no elements after it writes nothing") {
  // outer * inner == 0: the GPU launches nothing; the CPU must not divide by it.
  for (const Shape& shape : {Shape{2, 3, 0}, Shape{0, 3, 2}}) {
    CAPTURE(shape.to_string());
    const CpuResult cpu = run_cpu("argmax", {{"axis", "1"}}, {NDArray::zeros(shape)}, NDArray());
    cpu.output.wait_to_read();
    CHECK(cpu.output.shape() == Shape{shape[0], shape[2]});
  }
}
