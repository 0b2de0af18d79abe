#include "onnx/import_ops.h"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "base/strings.h"
#include "onnx/import_util.h"
#include "onnx/tensor_proto.h"
#include "op/nn/activation_table.h"
#include "op/nn/leaky_relu_kernels.h"

namespace mx::onnx {
using graph::Symbol;
using Attrs = std::map<std::string, std::string>;

namespace {

// Axes from the attribute (older opsets) or the input `k` (newer ones).
std::optional<std::vector<int64_t>> axes_of(ImportContext& c, const ImportNode& n, int k) {
  if (n.has("axes")) return n.ints("axes");
  if (!n.input(k).empty()) return int_values(need_constant(c, n, k, "axes"));
  return std::nullopt;
}

// Padding from explicit pads or auto_pad: begin values, then end values.
std::vector<int64_t> onnx_pads(ImportContext& c, const ImportNode& n,
                               const std::vector<int64_t>& kernel,
                               const std::vector<int64_t>& strides,
                               const std::vector<int64_t>& dilations, const std::string& input) {
  const size_t nd = kernel.size();
  std::vector<int64_t> pads = n.ints("pads");
  const std::string autopad = n.s("auto_pad", "NOTSET");
  if (autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
    Shape in = c.shape(input);
    pads.assign(2 * nd, 0);
    for (size_t i = 0; i < nd; ++i) {
      const int64_t size = in[static_cast<int>(i + 2)];
      if (size < 0) unsupported("auto_pad needs the spatial size of the input");
      const int64_t out = (size + strides[i] - 1) / strides[i];
      const int64_t total =
          std::max<int64_t>((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0);
      const int64_t small = total / 2;
      pads[i] = autopad == "SAME_UPPER" ? small : total - small;
      pads[i + nd] = total - pads[i];
    }
  } else if (autopad == "VALID") {
    pads.assign(2 * nd, 0);
  } else if (autopad != "NOTSET") {
    unsupported("auto_pad '" + autopad + "'");
  }
  if (pads.empty()) pads.assign(2 * nd, 0);
  if (pads.size() != 2 * nd)
    throw InputError(str("pads has ", pads.size(), " values, expected ", 2 * nd));
  return pads;
}

// mx pads both sides alike.
std::vector<int64_t> symmetric_pads(ImportContext& c, const ImportNode& n,
                                    const std::vector<int64_t>& kernel,
                                    const std::vector<int64_t>& strides,
                                    const std::vector<int64_t>& dilations,
                                    const std::string& input) {
  const size_t nd = kernel.size();
  std::vector<int64_t> pads = onnx_pads(c, n, kernel, strides, dilations, input);
  for (size_t i = 0; i < nd; ++i)
    if (pads[i] != pads[i + nd]) unsupported(str("asymmetric padding ", tuple(pads)));
  return {pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(nd)};
}

// Strides or dilations: one positive value per spatial axis (default 1).
std::vector<int64_t> per_axis(const ImportNode& n, const char* attr, size_t nd) {
  std::vector<int64_t> v = n.ints(attr);
  if (v.empty()) v.assign(nd, 1);
  if (v.size() != nd) throw InputError(str(attr, " has ", v.size(), " values, expected ", nd));
  for (int64_t x : v)
    if (x < 1) throw InputError(str(attr, " must be positive, not ", x));
  return v;
}

}  // namespace

std::vector<Symbol> import_conv(ImportContext& c, const ImportNode& n, bool transposed,
                                const std::array<std::string, 3>& inputs) {
  const auto& [x_name, w_name, b_name] = inputs;
  Shape w = c.shape(w_name);
  if (!w.is_known()) unsupported("the weight's shape must be known");
  if (w.ndim() < 3) throw InputError("the weight " + w.to_string() + " has fewer than 3 axes");
  std::vector<int64_t> kernel = n.ints("kernel_shape");
  if (kernel.empty()) kernel.assign(w.begin() + 2, w.end());
  const size_t nd = kernel.size();
  if (nd != 1 && nd != 2) unsupported(str(nd, "-D convolution (mx has 1-D and 2-D)"));
  auto strides = per_axis(n, "strides", nd), dilations = per_axis(n, "dilations", nd);
  const int64_t group = n.i("group", 1);
  Attrs a{{"kernel", tuple(kernel)},
          {"stride", tuple(strides)},
          {"dilate", tuple(dilations)},
          {"num_group", std::to_string(group)},
          {"no_bias", boolean(b_name.empty())}};
  std::vector<Symbol> in{c.get(x_name), c.get(w_name)};
  if (!b_name.empty()) in.push_back(c.get(b_name));
  if (!transposed) {
    a["pad"] = tuple(symmetric_pads(c, n, kernel, strides, dilations, x_name));
    a["num_filter"] = std::to_string(w[0]);
    return {c.op("Convolution", n.name, a, in)};
  }
  // Crop pads (begin b, end e) per axis: mx crops `pad` from both ends and
  // gives back `adj` at the end, so pad = b and adj = b - e + output_padding.
  std::vector<int64_t> out_pad = n.ints("output_padding");
  if (out_pad.empty()) out_pad.assign(nd, 0);
  std::vector<int64_t> pads = n.ints("pads");
  const std::string autopad = n.s("auto_pad", "NOTSET");
  std::vector<int64_t> target = n.ints("output_shape");
  if (target.size() > nd)
    target.erase(target.begin(), target.end() - static_cast<std::ptrdiff_t>(nd));
  if (!target.empty() || autopad == "SAME_UPPER" || autopad == "SAME_LOWER") {
    Shape x = c.shape(x_name);
    pads.assign(2 * nd, 0);
    for (size_t i = 0; i < nd; ++i) {
      const int64_t size = x[static_cast<int>(i + 2)];
      if (size < 0) unsupported("output_shape or auto_pad needs the spatial size of the input");
      const int64_t want = target.empty() ? size * strides[i] : target[i];
      const int64_t total =
          strides[i] * (size - 1) + out_pad[i] + (kernel[i] - 1) * dilations[i] + 1 - want;
      if (total < 0) unsupported(str("output_shape ", tuple(target), " needs negative padding"));
      pads[i] = autopad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[i + nd] = total - pads[i];
    }
  } else if (autopad == "VALID" || pads.empty()) {
    pads.assign(2 * nd, 0);
  } else if (autopad != "NOTSET") {
    unsupported("auto_pad '" + autopad + "'");
  }
  if (pads.size() != 2 * nd)
    throw InputError(str("pads has ", pads.size(), " values, expected ", 2 * nd));
  std::vector<int64_t> pad(nd), adj(nd);
  for (size_t i = 0; i < nd; ++i) {
    pad[i] = pads[i];
    adj[i] = pads[i] - pads[i + nd] + out_pad[i];
    if (adj[i] < 0)
      unsupported(str("more padding at the end than at the start (", tuple(pads), ")"));
  }
  a["pad"] = tuple(pad);
  a["adj"] = tuple(adj);
  a["num_filter"] = std::to_string(w[1] * group);
  return {c.op("Deconvolution", n.name, a, in)};
}

namespace {

std::vector<Symbol> pool(ImportContext& c, const ImportNode& n, const std::string& type) {
  if (n.num_outputs_used() > 1) unsupported("the Indices output");
  std::vector<int64_t> kernel = n.ints("kernel_shape");
  const size_t nd = kernel.size();
  if (nd != 1 && nd != 2) unsupported(str(nd, "-D pooling (mx has 1-D and 2-D)"));
  auto strides = per_axis(n, "strides", nd), dilations = per_axis(n, "dilations", nd);
  for (int64_t d : dilations)
    if (d != 1) unsupported("dilated pooling");
  std::vector<int64_t> pads = onnx_pads(c, n, kernel, strides, dilations, n.input(0));
  std::vector<int64_t> pad(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(nd));
  bool full = n.i("ceil_mode", 0) != 0;
  const bool include_pad = type == "avg" && n.i("count_include_pad", 0) != 0;
  if (!std::equal(pad.begin(), pad.end(), pads.begin() + static_cast<std::ptrdiff_t>(nd))) {
    // Extra padding at the end (SAME_UPPER) only adds windows that overlap
    // the input partly; mx's "full" rounding adds the same windows and
    // ignores what lies outside, as ONNX ignores padding (max, or average
    // without counting padding). It fits when the output sizes agree.
    Shape in = c.shape(n.input(0));
    bool fits = !full && !include_pad;
    for (size_t i = 0; i < nd && fits; ++i) {
      const int64_t size = in[static_cast<int>(i + 2)];
      const int64_t b = pads[i], e = pads[i + nd];
      fits = size >= 0 && b <= e &&
             (size + b + e - kernel[i]) / strides[i] ==
                 (size + 2 * b - kernel[i] + strides[i] - 1) / strides[i];
    }
    if (!fits) unsupported(str("asymmetric padding ", tuple(pads)));
    full = true;
  }
  Attrs a{{"kernel", tuple(kernel)},
          {"stride", tuple(strides)},
          {"pad", tuple(pad)},
          {"pool_type", type},
          {"pooling_convention", full ? "full" : "valid"}};
  if (type == "avg") a["count_include_pad"] = boolean(include_pad);
  return {c.op("Pooling", n.name, a, {c.get(n.input(0))})};
}

}  // namespace

// x OP y with ONNX's broadcasting; a one-element constant becomes a scalar operand.
std::vector<Symbol> import_arithmetic(ImportContext& c, const ImportNode& n,
                                      const std::string& name, const std::string& x,
                                      const std::string& y) {
  if (n.i("broadcast", 0) != 0 && n.has("axis"))
    unsupported("broadcasting along a given axis (opsets before 7)");
  auto scalar_of = [&](const std::string& t, const std::string& other) -> std::optional<double> {
    const NDArray* a = c.constant(t);
    if (!a || a->size() != 1 || c.tensors.count(t)) return std::nullopt;
    if (a->shape().ndim() > c.rank(other)) return std::nullopt;  // it would add axes
    return scalar_value(*a);
  };
  // The scalar operator for a constant on the right, and on the left.
  static const std::map<std::string, std::pair<std::string, std::string>> scalar_ops{
      {"add", {"_plus_scalar", "_plus_scalar"}},
      {"sub", {"_minus_scalar", "_rminus_scalar"}},
      {"mul", {"_mul_scalar", "_mul_scalar"}},
      {"div", {"_div_scalar", "_rdiv_scalar"}},
      {"power", {"_power_scalar", "_rpower_scalar"}},
      {"equal", {"_equal_scalar", "_equal_scalar"}},
      {"greater", {"_greater_scalar", "_lesser_scalar"}},
      {"greater_equal", {"_greater_equal_scalar", "_lesser_equal_scalar"}},
      {"lesser", {"_lesser_scalar", "_greater_scalar"}},
      {"lesser_equal", {"_lesser_equal_scalar", "_greater_equal_scalar"}}};
  const auto& [right, left] = scalar_ops.at(name);
  if (!c.constant(x) || c.tensors.count(x)) {
    if (auto s = scalar_of(y, x))
      return {c.op(right, n.name, {{"scalar", number(*s)}, {"is_int", "False"}}, {c.get(x)})};
  }
  if (!c.constant(y) || c.tensors.count(y)) {
    if (auto s = scalar_of(x, y))
      return {c.op(left, n.name, {{"scalar", number(*s)}, {"is_int", "False"}}, {c.get(y)})};
  }
  if (name == "power") {
    // x ** y = exp(y * log(x)): NaN for negative x, as numpy gives for non-integer y.
    Symbol lg = c.op("log", n.name + "_log", {}, {c.get(x)});
    Symbol prod = c.op("broadcast_mul", n.name + "_mul", {}, {c.get(y), lg});
    return {c.op("exp", n.name, {}, {prod})};
  }
  return {c.op("broadcast_" + name, n.name, {}, {c.get(x), c.get(y)})};
}

namespace {

std::vector<Symbol> arithmetic(ImportContext& c, const ImportNode& n, const std::string& name) {
  return import_arithmetic(c, n, name, n.input(0), n.input(1));
}

// Equal, Greater, Less, GreaterOrEqual, LessOrEqual: MXNet's comparisons
// (1 or 0 in float32), whose results are BOOL tensors for the import.
std::vector<Symbol> comparison(ImportContext& c, const ImportNode& n, const std::string& kind) {
  std::vector<Symbol> out = arithmetic(c, n, kind);
  c.booleans.insert(n.proto.output(0));
  return out;
}

// And, Or, Xor, Not of BOOL tensors (comparison results or Casts to BOOL).
std::vector<Symbol> logical(ImportContext& c, const ImportNode& n, const std::string& kind) {
  std::vector<Symbol> in;
  for (const auto& name : n.proto.input()) {
    if (!c.booleans.count(name))
      unsupported(str("operand '", name, "' is not a comparison result or a Cast to BOOL"));
    in.push_back(c.get(name));
  }
  c.booleans.insert(n.proto.output(0));
  if (kind == "not") return {c.op("logical_not", n.name, {}, in)};
  return {c.op("broadcast_logical_" + kind, n.name, {}, in)};
}

// Softmax before opset 13: over the input flattened after `axis`.
std::vector<Symbol> softmax(ImportContext& c, const ImportNode& n, bool log) {
  const int r = c.rank(n.input(0));
  const int64_t axis = positive(n.i("axis", c.opset >= 13 ? -1 : 1), r);
  const std::string op = log ? "log_softmax" : "softmax";
  if (c.opset >= 13 || axis == r - 1)
    return {c.op(op, n.name, {{"axis", std::to_string(axis)}}, {c.get(n.input(0))})};
  std::vector<int64_t> axes(static_cast<size_t>(r - axis));
  std::iota(axes.begin(), axes.end(), axis);
  Attrs reduce{{"axis", tuple(axes)}, {"keepdims", "True"}};
  Symbol x = c.get(n.input(0));
  Symbol shifted =
      c.op("broadcast_sub", n.name + "_shift", {}, {x, c.op("max", n.name + "_max", reduce, {x})});
  Symbol e = c.op("exp", n.name + "_exp", {}, {shifted});
  Symbol sum = c.op("sum", n.name + "_sum", reduce, {e});
  if (!log) return {c.op("broadcast_div", n.name, {}, {e, sum})};
  return {c.op("broadcast_sub", n.name, {}, {shifted, c.op("log", n.name + "_log", {}, {sum})})};
}

std::vector<Symbol> reduce(ImportContext& c, const ImportNode& n, const std::string& op) {
  const int r = c.rank(n.input(0));
  std::optional<std::vector<int64_t>> axes = axes_of(c, n, 1);
  Attrs a{{"keepdims", boolean(n.i("keepdims", 1) != 0)}};
  if (axes && !axes->empty()) {
    for (auto& x : *axes) x = positive(x, r);
    a["axis"] = tuple(*axes);
  } else if (n.i("noop_with_empty_axes", 0)) {
    return {c.get(n.input(0))};
  }
  return {c.op(op, n.name, a, {c.get(n.input(0))})};
}

std::vector<Symbol> gather(ImportContext& c, const ImportNode& n) {
  Shape data = c.shape(n.input(0));
  const int r = data.ndim();
  const int64_t axis = positive(n.i("axis", 0), r);
  const int64_t depth = data[static_cast<int>(axis)];
  if (depth < 0) unsupported("the gathered axis must have a known size");
  const int q = c.rank(n.input(1));
  // indices (negative ones count from the end) as one-hot rows, times the data.
  Symbol idx;
  if (const NDArray* k = c.constant(n.input(1)); k && !c.tensors.count(n.input(1))) {
    std::vector<float> v;
    for (int64_t i : int_values(*k)) {
      if (i < -depth || i >= depth)
        throw InputError(str("index ", i, " is out of range [", -depth, ", ", depth, ")"));
      v.push_back(static_cast<float>(i < 0 ? i + depth : i));
    }
    const std::string name = c.unique(n.name + "_indices");
    c.constants[name] = NDArray::from_vector(k->shape(), v);
    idx = c.get(name);
  } else {
    Symbol f = c.op("Cast", n.name + "_cast", {{"dtype", "float32"}}, {c.get(n.input(1))});
    Symbol neg = c.op("clip", n.name + "_is_negative", {{"a_min", "0"}, {"a_max", "1"}},
                      {c.op("negative", n.name + "_neg", {}, {f})});
    idx = c.op("elemwise_add", n.name + "_wrap", {},
               {f, c.op("_mul_scalar", n.name + "_offset",
                        {{"scalar", std::to_string(depth)}, {"is_int", "True"}}, {neg})});
  }
  Symbol onehot = c.op("one_hot", n.name + "_onehot", {{"depth", std::to_string(depth)}}, {idx});
  Symbol x = c.get(n.input(0));
  if (axis == 0) return {c.op("dot", n.name, {}, {onehot, x})};
  std::vector<int64_t> front{axis};
  for (int64_t i = 0; i < r; ++i)
    if (i != axis) front.push_back(i);
  Symbol moved = c.op("transpose", n.name + "_front", {{"axes", tuple(front)}}, {x});
  Symbol prod = c.op("dot", n.name + "_dot", {}, {onehot, moved});
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < axis; ++i) perm.push_back(q + i);
  for (int64_t i = 0; i < q; ++i) perm.push_back(i);
  for (int64_t i = q + axis; i < q + r - 1; ++i) perm.push_back(i);
  return {c.op("transpose", n.name, {{"axes", tuple(perm)}}, {prod})};
}

// Squeezes one axis of a rank-r tensor by merging it with a neighbour
// (Reshape's -3), which keeps symbolic dimensions symbolic.
Symbol squeeze_one(ImportContext& c, const std::string& name, const Symbol& x, int64_t axis,
                   int r) {
  if (r == 1) unsupported("squeezing a 1-D tensor to a scalar");
  std::vector<int64_t> codes(static_cast<size_t>(std::max<int64_t>(axis - 1, 0)), 0);
  codes.push_back(-3);
  codes.push_back(-2);
  return reshape(c, name, codes, x);
}

}  // namespace

std::vector<Symbol> import_matmul(ImportContext& c, const ImportNode& n, const std::string& a_name,
                                  const std::string& b_name) {
  const int ra = c.rank(a_name), rb = c.rank(b_name);
  Symbol a = c.get(a_name), b = c.get(b_name);
  if (rb <= 2) return {c.op("dot", n.name, {}, {a, b})};
  if (ra != rb) unsupported(str("MatMul of ranks ", ra, " and ", rb, " (broadcast batches)"));
  if (ra == 3) return {c.op("batch_dot", n.name, {}, {a, b})};
  Shape sa = c.shape(a_name), sb = c.shape(b_name);
  for (int i = 0; i < ra - 2; ++i)
    if (sa[i] != sb[i] || sa[i] < 0) unsupported("MatMul with broadcast or unknown batch axes");
  Attrs flat{{"shape", "(-1, 0, 0)"}, {"reverse", "True"}};
  Symbol prod = c.op(
      "batch_dot", n.name + "_batch", {},
      {c.op("Reshape", n.name + "_lhs", flat, {a}), c.op("Reshape", n.name + "_rhs", flat, {b})});
  std::vector<int64_t> out(sa.begin(), sa.end() - 1);
  out.push_back(sb[rb - 1]);
  return {reshape(c, n.name, out, prod)};
}

namespace {

std::vector<Symbol> gemm(ImportContext& c, const ImportNode& n) {
  const float alpha = n.f("alpha", 1), beta = n.f("beta", 1);
  const bool ta = n.i("transA", 0) != 0, tb = n.i("transB", 0) != 0;
  const std::string cname = n.input(2);
  Shape sb = c.shape(n.input(1));
  if (!ta && tb && alpha == 1 && sb.is_known() &&
      (cname.empty() || (beta == 1 && c.shape(cname) == Shape{sb[0]}))) {
    std::vector<Symbol> in{c.get(n.input(0)), c.get(n.input(1))};
    if (!cname.empty()) in.push_back(c.get(cname));
    return {c.op("FullyConnected", n.name,
                 {{"num_hidden", std::to_string(sb[0])}, {"no_bias", boolean(cname.empty())}}, in)};
  }
  Symbol prod = c.op("dot", cname.empty() && alpha == 1 ? n.name : n.name + "_dot",
                     {{"transpose_a", boolean(ta)}, {"transpose_b", boolean(tb)}},
                     {c.get(n.input(0)), c.get(n.input(1))});
  if (alpha != 1)
    prod = c.op("_mul_scalar", cname.empty() ? n.name : n.name + "_alpha",
                {{"scalar", number(alpha)}, {"is_int", "False"}}, {prod});
  if (cname.empty()) return {prod};
  Symbol bias = c.get(cname);
  if (beta != 1)
    bias = c.op("_mul_scalar", n.name + "_beta", {{"scalar", number(beta)}, {"is_int", "False"}},
                {bias});
  return {c.op("broadcast_add", n.name, {}, {prod, bias})};
}

std::vector<Symbol> clip(ImportContext& c, const ImportNode& n) {
  double lo = -FLT_MAX, hi = FLT_MAX;
  if (c.opset < 11) {
    lo = n.f("min", -FLT_MAX);
    hi = n.f("max", FLT_MAX);
  } else {
    if (!n.input(1).empty()) lo = scalar_value(need_constant(c, n, 1, "min"));
    if (!n.input(2).empty()) hi = scalar_value(need_constant(c, n, 2, "max"));
  }
  return {
      c.op("clip", n.name, {{"a_min", number(lo)}, {"a_max", number(hi)}}, {c.get(n.input(0))})};
}

std::vector<Symbol> constant(ImportContext& c, const ImportNode& n) {
  const auto& a = n.proto.attribute();
  if (a.empty()) throw InputError("Constant without a value");
  const auto& v = a[0];
  NDArray value;
  if (v.name() == "value") {
    value = tensor_to_array(v.t(), "Constant '" + n.name + "'");
  } else if (v.name() == "value_float") {
    value = NDArray::from_vector(Shape::scalar(), std::vector<float>{v.f()});
  } else if (v.name() == "value_floats") {
    value = NDArray::from_vector(Shape{v.floats_size()},
                                 std::vector<float>(v.floats().begin(), v.floats().end()));
  } else if (v.name() == "value_int") {
    value = NDArray::from_vector(Shape::scalar(), std::vector<int64_t>{v.i()});
  } else if (v.name() == "value_ints") {
    value = NDArray::from_vector(Shape{v.ints_size()},
                                 std::vector<int64_t>(v.ints().begin(), v.ints().end()));
  } else {
    unsupported("Constant attribute '" + v.name() + "'");
  }
  c.constants[n.proto.output(0)] = value;
  return {};
}

// Sum, Mean, Max, Min of any number of inputs, with broadcasting.
std::vector<Symbol> variadic(ImportContext& c, const ImportNode& n, const std::string& op) {
  std::vector<std::string> names;
  for (const auto& i : n.proto.input())
    if (!i.empty()) names.push_back(i);
  if (names.empty()) throw InputError("no inputs");
  const bool mean = op == "mean";
  const std::string pairwise = mean ? "broadcast_add" : "broadcast_" + op;
  Symbol acc = c.get(names[0]);
  for (size_t i = 1; i < names.size(); ++i)
    acc = c.op(pairwise, i + 1 == names.size() && !mean ? n.name : n.name + "_step", {},
               {acc, c.get(names[i])});
  if (names.size() == 1 && !mean) return {c.op("_copy", n.name, {}, {acc})};
  if (mean)
    acc = c.op("_div_scalar", n.name,
               {{"scalar", std::to_string(names.size())}, {"is_int", "True"}}, {acc});
  return {acc};
}

// Values of input k (newer opsets) or attribute `attr` (older ones).
std::optional<std::vector<int64_t>> ints_of(ImportContext& c, const ImportNode& n, int k,
                                            const char* attr) {
  if (n.has(attr)) return n.ints(attr);
  if (!n.input(k).empty()) return int_values(need_constant(c, n, k, attr));
  return std::nullopt;
}

std::vector<Symbol> slice(ImportContext& c, const ImportNode& n) {
  auto starts = ints_of(c, n, 1, "starts"), ends = ints_of(c, n, 2, "ends");
  if (!starts || !ends || starts->size() != ends->size())
    throw InputError("Slice needs starts and ends of the same length");
  Shape s = c.shape(n.input(0));
  const int rank = s.ndim();
  std::vector<int64_t> axes(starts->size());
  std::iota(axes.begin(), axes.end(), 0);
  if (auto given = ints_of(c, n, 3, "axes")) axes = *given;
  if (axes.size() != starts->size()) throw InputError("Slice's axes and starts differ in length");
  if (auto steps = ints_of(c, n, 4, "steps"))
    for (int64_t step : *steps)
      if (step != 1) unsupported(str("Slice with step ", step));
  Symbol x = c.get(n.input(0));
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = positive(axes[i], rank), dim = s[static_cast<int>(axis)];
    int64_t begin = (*starts)[i], end = (*ends)[i];
    // Clamp as ONNX does, where the size is known.
    if (dim >= 0) {
      begin = std::clamp<int64_t>(begin < 0 ? begin + dim : begin, 0, dim);
      end = std::clamp<int64_t>(end < 0 ? end + dim : end, 0, dim);
      if (end <= begin) unsupported("an empty slice");
    }
    const bool to_end = (dim >= 0 && end == dim) || end > std::numeric_limits<int32_t>::max();
    x = c.op("slice_axis", i + 1 == axes.size() ? n.name : n.name + "_step",
             {{"axis", std::to_string(axis)},
              {"begin", std::to_string(begin)},
              {"end", to_end ? "None" : std::to_string(end)}},
             {x});
  }
  return {x};
}

std::vector<Symbol> split(ImportContext& c, const ImportNode& n) {
  Shape s = c.shape(n.input(0));
  const int64_t axis = positive(n.i("axis", 0), s.ndim());
  const int parts = n.proto.output_size();
  Symbol x = c.get(n.input(0));
  auto sizes = ints_of(c, n, 1, "split");
  if (!sizes) {
    Symbol all =
        c.op("SliceChannel", n.name,
             {{"num_outputs", std::to_string(parts)}, {"axis", std::to_string(axis)}}, {x});
    std::vector<Symbol> out;
    for (int i = 0; i < parts; ++i) out.push_back(all[static_cast<size_t>(i)]);
    return out;
  }
  if (static_cast<int>(sizes->size()) != parts)
    throw InputError(str("split has ", sizes->size(), " sizes for ", parts, " outputs"));
  std::vector<Symbol> out;
  int64_t begin = 0;
  for (int i = 0; i < parts; ++i) {
    const int64_t end = begin + (*sizes)[static_cast<size_t>(i)];
    out.push_back(c.op("slice_axis", str(n.name, "_", i),
                       {{"axis", std::to_string(axis)},
                        {"begin", std::to_string(begin)},
                        {"end", std::to_string(end)}},
                       {x}));
    begin = end;
  }
  return out;
}

std::vector<Symbol> cast(ImportContext& c, const ImportNode& n) {
  if (n.i("to", 0) == ::onnx::TensorProto::BOOL) {
    // Nonzero is true: x != 0, a BOOL tensor held as float32 1 and 0.
    c.booleans.insert(n.proto.output(0));
    if (c.booleans.count(n.input(0))) return {c.get(n.input(0))};
    if (c.dtype(n.input(0)) != DType::kFloat32)
      unsupported(str("Cast to BOOL of a ", dtype_name(c.dtype(n.input(0))), " tensor"));
    return {c.op("_not_equal_scalar", n.name, {{"scalar", "0"}, {"is_int", "False"}},
                 {c.get(n.input(0))})};
  }
  auto to = dtype_from_onnx(static_cast<int32_t>(n.i("to", 0)));
  if (!to || *to != DType::kFloat32)
    unsupported("Cast to " + onnx_type_name(static_cast<int32_t>(n.i("to", 0))) +
                " (mx imports float32 tensors)");
  return {c.op("Cast", n.name, {{"dtype", "float32"}}, {c.get(n.input(0))})};
}

// An ONNX operator that is one mx operator of its first input, with fixed attributes.
void simple(std::map<std::string, ImportOp>& r, const std::string& onnx, const std::string& mx,
            Attrs attrs = {}) {
  r[onnx] = {[mx, attrs](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
               return {c.op(mx, n.name, attrs, {c.get(n.input(0))})};
             },
             {}};
}

// Convolutions, products, pooling, normalization, activations, softmax.
void add_layer_import_rules(std::map<std::string, ImportOp>& r) {
  r["Conv"] = {[](ImportContext& c, const ImportNode& n) {
                 auto out = import_conv(c, n, false, {n.input(0), n.input(1), n.input(2)});
                 mark_int8_layer(c, n, out[0]);
                 return out;
               },
               {}};
  r["ConvTranspose"] = {[](ImportContext& c, const ImportNode& n) {
                          return import_conv(c, n, true, {n.input(0), n.input(1), n.input(2)});
                        },
                        {}};
  r["Gemm"] = {[](ImportContext& c, const ImportNode& n) {
                 auto out = gemm(c, n);
                 // A Gemm that is a FullyConnected may read quantized data and weights.
                 if (out.size() == 1 && !out[0].outputs()[0].node->is_variable() &&
                     out[0].outputs()[0].node->op->def().name == "FullyConnected")
                   mark_int8_layer(c, n, out[0]);
                 return out;
               },
               {}};
  r["MatMul"] = {[](ImportContext& c, const ImportNode& n) {
                   return import_matmul(c, n, n.input(0), n.input(1));
                 },
                 {}};
  r["MaxPool"] = {[](ImportContext& c, const ImportNode& n) { return pool(c, n, "max"); }, {}};
  r["AveragePool"] = {[](ImportContext& c, const ImportNode& n) { return pool(c, n, "avg"); }, {}};
  for (auto [onnx, type] :
       {std::pair{"GlobalAveragePool", "avg"}, std::pair{"GlobalMaxPool", "max"}})
    r[onnx] = {
        [type = std::string(type)](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
          const int rank = c.rank(n.input(0));
          if (rank != 3 && rank != 4) unsupported(str("global pooling of rank ", rank));
          return {c.op("Pooling", n.name,
                       {{"global_pool", "True"},
                        {"pool_type", type},
                        {"kernel", rank == 3 ? "(1,)" : "(1, 1)"}},
                       {c.get(n.input(0))})};
        },
        {}};
  r["BatchNormalization"] = {
      [](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
        if (n.i("spatial", 1) == 0) unsupported("spatial=0 (statistics per element)");
        if (n.i("training_mode", 0) != 0 || n.num_outputs_used() > 1)
          unsupported("training mode (running statistics as outputs)");
        return {c.op("BatchNorm", n.name,
                     {{"eps", number(n.f("epsilon", 1e-5f))},
                      {"momentum", number(n.f("momentum", 0.9f))},
                      {"fix_gamma", "False"},
                      {"use_global_stats", "True"}},
                     {c.get(n.input(0)), c.get(n.input(1)), c.get(n.input(2)),
                      c.get(n.input(3), true), c.get(n.input(4), true)})};
      },
      {}};
  for (const op::ActivationKind& kind : op::kActivationKinds)
    simple(r, kind.onnx_op, "Activation", {{"act_type", kind.name}});
  r["LeakyRelu"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                      return {c.op("LeakyReLU", n.name,
                                   {{"act_type", "leaky"}, {"slope", number(n.f("alpha", 0.01f))}},
                                   {c.get(n.input(0))})};
                    },
                    {}};
  r["Elu"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                return {c.op("LeakyReLU", n.name,
                             {{"act_type", "elu"}, {"slope", number(n.f("alpha", 1.0f))}},
                             {c.get(n.input(0))})};
              },
              {}};
  r["Selu"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                 // mx's selu has the self-normalizing constants built in (as
                 // MXNet's); ONNX's defaults are the same numbers in float32.
                 const float alpha = n.f("alpha", static_cast<float>(op::kSeluAlpha)),
                             gamma = n.f("gamma", static_cast<float>(op::kSeluLambda));
                 if (alpha != static_cast<float>(op::kSeluAlpha) ||
                     gamma != static_cast<float>(op::kSeluLambda))
                   unsupported(str("alpha ", alpha, " and gamma ", gamma,
                                   " (mx's selu has alpha 1.67326 and gamma 1.0507 only)"));
                 return {c.op("LeakyReLU", n.name, {{"act_type", "selu"}}, {c.get(n.input(0))})};
               },
               {}};
  r["PRelu"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                  // relu(x) + slope * min(x, 0), with ONNX's broadcasting of slope.
                  Symbol x = c.get(n.input(0));
                  Symbol neg = c.op("_minimum_scalar", n.name + "_negative_part",
                                    {{"scalar", "0"}, {"is_int", "False"}}, {x});
                  Symbol slope = c.get(n.input(1));
                  const int rank = c.rank(n.input(0));
                  if (c.opset < 7 && c.rank(n.input(1)) == 1 && rank > 2) {
                    // PRelu-6: a 1-D slope holds one value per channel (axis 1).
                    std::vector<int64_t> shape{-1};
                    shape.resize(static_cast<size_t>(rank - 1), 1);
                    slope = reshape(c, n.name + "_slope", shape, slope);
                  }
                  Symbol scaled = c.op("broadcast_mul", n.name + "_scaled", {}, {neg, slope});
                  return {c.op("broadcast_add", n.name, {},
                               {c.op("relu", n.name + "_positive_part", {}, {x}), scaled})};
                },
                {}};
  r["Softmax"] = {[](ImportContext& c, const ImportNode& n) { return softmax(c, n, false); }, {}};
  r["LogSoftmax"] = {[](ImportContext& c, const ImportNode& n) { return softmax(c, n, true); }, {}};
  for (auto [onnx, mx] : {std::pair{"Add", "add"}, std::pair{"Sub", "sub"}, std::pair{"Mul", "mul"},
                          std::pair{"Div", "div"}})
    r[onnx] = {[mx = std::string(mx)](ImportContext& c, const ImportNode& n) {
                 return arithmetic(c, n, mx);
               },
               {}};
}

// Arithmetic, Concat and the shape operators.
void add_shape_import_rules(std::map<std::string, ImportOp>& r) {
  r["Pow"] = {[](ImportContext& c, const ImportNode& n) { return arithmetic(c, n, "power"); }, {}};
  r["Concat"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                   std::vector<Symbol> in;
                   for (const auto& i : n.proto.input()) in.push_back(c.get(i));
                   return {c.op("Concat", n.name,
                                {{"num_args", std::to_string(in.size())},
                                 {"dim", std::to_string(n.i("axis", 1))}},
                                in)};
                 },
                 {}};
  r["Flatten"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                    const int rank = c.rank(n.input(0));
                    int64_t axis = n.i("axis", 1);
                    if (axis < 0) axis += rank;
                    Symbol x = c.get(n.input(0));
                    if (axis == 0) return {reshape(c, n.name, {1, -1}, x)};
                    for (int64_t i = 1; i < axis; ++i)  // merge the leading axes pairwise
                      x = reshape(c, n.name + "_merge", {-3, -2}, x);
                    return {reshape(c, n.name, {0, -1}, x)};
                  },
                  {}};
  r["Reshape"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                    auto shape = n.has("shape")  // an attribute before opset 5
                                     ? n.ints("shape")
                                     : int_values(need_constant(c, n, 1, "shape"));
                    // ONNX's codes are 0 and one -1; mx's Reshape would read
                    // -2, -3 and -4 as its own codes, so they are refused here.
                    for (int64_t d : shape)
                      if (d < -1)
                        throw InputError(str("the shape ", tuple(shape), " holds ", d,
                                             " (ONNX allows -1 and 0 as codes)"));
                    if (shape.empty()) unsupported("Reshape to a scalar (an empty shape)");
                    if (std::count(shape.begin(), shape.end(), -1) > 1)
                      throw InputError(str("the shape ", tuple(shape), " has more than one -1"));
                    if (n.i("allowzero", 0) && std::count(shape.begin(), shape.end(), 0))
                      unsupported("allowzero with a zero dimension");
                    return {reshape(c, n.name, shape, c.get(n.input(0)))};
                  },
                  {1}};
  r["Transpose"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                      Attrs a;
                      if (n.has("perm")) a["axes"] = tuple(n.ints("perm"));
                      return {c.op("transpose", n.name, a, {c.get(n.input(0))})};
                    },
                    {}};
  r["Squeeze"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                    Shape s = c.shape(n.input(0));
                    int rank = s.ndim();
                    std::vector<int64_t> axes;
                    if (auto given = axes_of(c, n, 1)) {
                      for (int64_t a : *given) axes.push_back(positive(a, rank));
                    } else {
                      for (int i = 0; i < rank; ++i) {
                        if (s[i] < 0) unsupported("Squeeze without axes needs known dimensions");
                        if (s[i] == 1) axes.push_back(i);
                      }
                    }
                    std::sort(axes.rbegin(), axes.rend());
                    Symbol x = c.get(n.input(0));
                    if (axes.empty()) return {x};
                    for (size_t i = 0; i < axes.size(); ++i, --rank)
                      x = squeeze_one(c, i + 1 == axes.size() ? n.name : n.name + "_step", x,
                                      axes[i], rank);
                    return {x};
                  },
                  {1}};
  r["Unsqueeze"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                      auto given = axes_of(c, n, 1);
                      if (!given) throw InputError("Unsqueeze without axes");
                      const int out_rank = c.rank(n.input(0)) + static_cast<int>(given->size());
                      std::vector<int64_t> axes;
                      for (int64_t a : *given) axes.push_back(positive(a, out_rank));
                      std::sort(axes.begin(), axes.end());
                      Symbol x = c.get(n.input(0));
                      for (size_t i = 0; i < axes.size(); ++i)
                        x = c.op("expand_dims", i + 1 == axes.size() ? n.name : n.name + "_step",
                                 {{"axis", std::to_string(axes[i])}}, {x});
                      return {x};
                    },
                    {1}};
}

// Dropout, Identity, LRN, element-wise math, reductions, gathers, slices,
// casts and the comparisons.
void add_tensor_import_rules(std::map<std::string, ImportOp>& r) {
  r["Dropout"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                    if (n.num_outputs_used() > 1) unsupported("the mask output");
                    if (!n.input(2).empty()) {
                      const NDArray* t = c.constant(n.input(2));
                      if (!t || scalar_value(*t) != 0) unsupported("training_mode");
                    }
                    return {c.get(n.input(0))};  // inference: the identity
                  },
                  {1, 2}};
  r["Identity"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                     if (c.constant(n.input(0)) && !c.tensors.count(n.input(0))) {
                       c.constants[n.proto.output(0)] = *c.constant(n.input(0));
                       return {};
                     }
                     return {c.get(n.input(0))};
                   },
                   {0}};
  r["LRN"] = {[](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
                const int64_t size = n.i("size", 0);
                if (size % 2 == 0) unsupported(str("an even size (", size, ")"));
                return {c.op("LRN", n.name,
                             {{"nsize", std::to_string(size)},
                              {"alpha", number(n.f("alpha", 1e-4f))},
                              {"beta", number(n.f("beta", 0.75f))},
                              {"knorm", number(n.f("bias", 1.0f))}},
                             {c.get(n.input(0))})};
              },
              {}};
  r["Clip"] = {clip, {1, 2}};
  simple(r, "Exp", "exp");
  simple(r, "Erf", "erf");
  simple(r, "Log", "log");
  simple(r, "Sqrt", "sqrt");
  simple(r, "Abs", "abs");
  simple(r, "Neg", "negative");
  simple(r, "Reciprocal", "reciprocal");
  r["ReduceSum"] = {[](ImportContext& c, const ImportNode& n) { return reduce(c, n, "sum"); }, {1}};
  r["ReduceMean"] = {[](ImportContext& c, const ImportNode& n) { return reduce(c, n, "mean"); },
                     {}};
  r["ReduceMax"] = {[](ImportContext& c, const ImportNode& n) { return reduce(c, n, "max"); }, {}};
  r["ReduceMin"] = {[](ImportContext& c, const ImportNode& n) { return reduce(c, n, "min"); }, {}};
  r["Gather"] = {gather, {1}};
  r["Constant"] = {constant, {}};
  for (auto [onnx, mx] : {std::pair{"Sum", "add"}, std::pair{"Mean", "mean"},
                          std::pair{"Max", "maximum"}, std::pair{"Min", "minimum"}})
    r[onnx] = {[mx = std::string(mx)](ImportContext& c, const ImportNode& n) {
                 return variadic(c, n, mx);
               },
               {}};
  r["Slice"] = {slice, {1, 2, 3, 4}};
  r["Split"] = {split, {1}};
  r["Cast"] = {cast, {0}, true};
  for (auto [onnx, mx] : {std::pair{"Equal", "equal"}, std::pair{"Greater", "greater"},
                          std::pair{"GreaterOrEqual", "greater_equal"}, std::pair{"Less", "lesser"},
                          std::pair{"LessOrEqual", "lesser_equal"}})
    r[onnx] = {[mx = std::string(mx)](ImportContext& c, const ImportNode& n) {
                 return comparison(c, n, mx);
               },
               {}};
  for (auto [onnx, mx] : {std::pair{"And", "and"}, std::pair{"Or", "or"}, std::pair{"Xor", "xor"},
                          std::pair{"Not", "not"}})
    r[onnx] = {
        [mx = std::string(mx)](ImportContext& c, const ImportNode& n) { return logical(c, n, mx); },
        {0, 1},
        true};
}

std::map<std::string, ImportOp> make_rules() {
  std::map<std::string, ImportOp> r;
  add_layer_import_rules(r);
  add_shape_import_rules(r);
  add_tensor_import_rules(r);
  return r;
}

}  // namespace

const std::map<std::string, ImportOp>& import_rules() {
  static const std::map<std::string, ImportOp> rules = [] {
    auto r = make_rules();
    add_sequence_import_rules(r);
    add_quantized_import_rules(r);
    return r;
  }();
  return rules;
}

}  // namespace mx::onnx
