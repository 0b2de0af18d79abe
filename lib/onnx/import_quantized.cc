// Quantized ONNX models (ONNX Runtime's quantizer: QDQ and QOperator
// formats) imported as float32 networks that mx runs with int8 convolutions.
//
// mx holds every quantized tensor as its real value, (q - zero_point) *
// scale, in float32: QuantizeLinear of a tensor is the tensor itself,
// DequantizeLinear of an integer initializer is a float32 constant, and a
// QLinear operator is its float operator on the real values. Rounding and
// saturation to the quantized range are the quantization's error, which mx
// reproduces where it runs the layer in int8, except a saturation at zero:
// ONNX Runtime's quantizer removes a ReLU (or Clip) before a quantization
// whose range starts at 0 (uint8 with zero point 0), so such a quantization
// imports as a ReLU.
//
// Where a convolution (or a Gemm that imports as FullyConnected) reads
// DequantizeLinear(QuantizeLinear(x)) (or is a QLinearConv) with int8
// weights of zero point 0, its mx Convolution (FullyConnected) is marked int8
// (graph/quantize_marks.h) and the node making x gets the calibrated range the quantization covers,
// so that mx's fused inference graph quantizes x at the same scale; the weights become float32
// parameters, which mx quantizes per output channel again (to the same
// values for per-channel symmetric weights).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "base/strings.h"
#include "graph/quantize_marks.h"
#include "onnx/import_ops.h"
#include "onnx/import_util.h"
#include "op/invoke.h"
#include "op/nn/activation_table.h"

namespace mx::onnx {
using graph::Symbol;

namespace {

// The quantized range of a stored type.
std::pair<int64_t, int64_t> type_limits(DType t) {
  switch (t) {
    case DType::kUint8: return {0, 255};
    case DType::kInt8: return {-128, 127};
    case DType::kInt32:
      return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    default: unsupported(str("quantization to ", dtype_name(t), " (mx reads int8, uint8, int32)"));
  }
}

std::vector<float> float_values(const NDArray& a, const char* what) {
  if (a.dtype() != DType::kFloat32) unsupported(str(what, " of type ", dtype_name(a.dtype())));
  return a.to_vector<float>();
}

// The quantization of a QuantizeLinear/DequantizeLinear node or of one
// operand of a QLinear operator: scale (input `scale_k`) and zero point
// (input `zero_k`, absent: 0 of `default_type`), constants.
Quantization read_quantization(ImportContext& c, const ImportNode& n, int scale_k, int zero_k,
                               DType default_type, int64_t axis) {
  Quantization q;
  q.scale = float_values(need_constant(c, n, scale_k, "the scale"), "a scale");
  q.axis = axis;
  q.type = default_type;
  if (!n.input(zero_k).empty()) {
    const NDArray& z = need_constant(c, n, zero_k, "the zero point");
    q.type = z.dtype();
    q.zero_point = int_values(z);
  } else {
    q.zero_point.assign(q.scale.size(), 0);
  }
  type_limits(q.type);
  if (q.scale.empty() || q.scale.size() != q.zero_point.size())
    throw InputError(
        str("the scale has ", q.scale.size(), " values and the zero point ", q.zero_point.size()));
  for (float s : q.scale)
    if (!(s > 0) || !std::isfinite(s)) throw InputError(str("scale ", s, " is not positive"));
  return q;
}

// How an array of shape `s` splits into the slices along `axis` that a
// per-axis quantization `q` scales one by one (one slice per tensor).
struct Slices {
  int64_t inner = 1, channels = 1;
};
Slices slices_of(const Shape& s, const Quantization& q, int64_t axis) {
  Slices out;
  if (q.per_tensor()) return out;
  axis = positive(axis, s.ndim());
  out.channels = s[static_cast<int>(axis)];
  for (int d = static_cast<int>(axis) + 1; d < s.ndim(); ++d) out.inner *= s[d];
  if (out.channels != static_cast<int64_t>(q.scale.size()))
    throw InputError(str("the scale has ", q.scale.size(), " values for ", out.channels,
                         " slices along axis ", axis));
  return out;
}

// (q - zero_point) * scale of an integer constant, per tensor or along `axis`.
NDArray dequantize_array(const NDArray& a, const Quantization& q, int64_t axis) {
  const std::vector<int64_t> v = int_values(a);
  const Shape& s = a.shape();
  const Slices slices = slices_of(s, q, axis);
  const int64_t inner = slices.inner, channels = slices.channels;
  std::vector<float> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const size_t ch = q.per_tensor() ? 0 : static_cast<size_t>((i / inner) % channels);
    out[i] = static_cast<float>(v[i] - q.zero_point[ch]) * q.scale[ch];
  }
  return NDArray::from_vector(s, out);
}

// QuantizeLinear of a float constant: round half to even, saturate.
NDArray quantize_array(const NDArray& a, const Quantization& q, int64_t axis) {
  const std::vector<float> v = float_values(a, "QuantizeLinear of a constant");
  const Shape& s = a.shape();
  const Slices slices = slices_of(s, q, axis);
  const int64_t inner = slices.inner, channels = slices.channels;
  // Not a structured binding: clang before 16 cannot capture one in a lambda.
  const auto limits = type_limits(q.type);
  const auto lo = limits.first, hi = limits.second;
  NDArray out(s, Context::cpu(), q.type);
  out.wait_to_read();
  dispatch_dtype(q.type, [&](auto tag) {
    using T = typename decltype(tag)::type;
    T* p = static_cast<T*>(out.raw_data());
    for (size_t i = 0; i < v.size(); ++i) {
      const size_t ch = q.per_tensor() ? 0 : static_cast<size_t>((i / inner) % channels);
      // (NaN, which has no quantized value, as 0.)
      const double real = std::isnan(v[i]) ? 0.0 : static_cast<double>(v[i]);
      const double r = std::nearbyint(real / q.scale[ch]) + static_cast<double>(q.zero_point[ch]);
      p[i] =
          static_cast<T>(std::clamp<double>(r, static_cast<double>(lo), static_cast<double>(hi)));
    }
  });
  return out;
}

// Whether every value of `q`'s range is >= 0 (zero point at the type's
// minimum): the quantization then saturates negative values to 0.
bool starts_at_zero(const Quantization& q) {
  const int64_t lo = type_limits(q.type).first;
  return std::all_of(q.zero_point.begin(), q.zero_point.end(), [&](int64_t z) { return z == lo; });
}

// The calibrated range mx gives a value quantized per tensor as `q`: the
// range the quantization covers, (lo - zero_point) * scale to (hi -
// zero_point) * scale, except for int8 with zero point 0, where it is
// +-127 * scale (mx's symmetric int8 then has the same scale). `exact`:
// mx's int8 form (uint8 from 0, or symmetric int8) has the same steps.
struct MappedRange {
  op::ValueRange range;
  bool exact = true;
};
MappedRange mapped_range(const Quantization& q) {
  // Not a structured binding: clang before 16 cannot capture one in a lambda.
  const auto limits = type_limits(q.type);
  const auto lo = limits.first, hi = limits.second;
  const float s = q.scale[0];
  const int64_t z = q.zero_point[0];
  if (q.type == DType::kInt8 && z == 0) return {{-127 * s, 127 * s}, true};
  if (z == lo) return {{0.0f, static_cast<float>(hi - lo) * s}, true};
  return {{static_cast<float>(lo - z) * s, static_cast<float>(hi - z) * s}, false};
}

// Whether a value is known to have no negative elements.
bool nonnegative(const Symbol& s) {
  const auto& e = s.outputs()[0];
  const graph::Node& n = *e.node;
  if (n.is_variable() || e.index != 0) return false;
  const std::string op = n.op->def().name;
  if (op == "relu" || op == "sigmoid") return true;
  if (op == "Activation") {
    auto a = n.attrs.find("act_type");
    if (a == n.attrs.end()) return false;
    const auto kind = op::activation_by_name(a->second);
    return kind && op::activation_kind(*kind).nonnegative;
  }
  if (op == "Pooling" || op == "Reshape" || op == "Flatten" || op == "transpose" ||
      op == "expand_dims" || op == "slice_axis")
    return !n.inputs.empty() && nonnegative(Symbol({n.inputs[0]}));
  return false;
}

// Gives the node making `v` the calibrated range `q` covers, unless it has
// one, or the quantization is per channel, or `v` is not a first output.
void set_range(const Symbol& v, const Quantization& q) {
  const auto& e = v.outputs()[0];
  if (!q.per_tensor() || e.index != 0 || graph::calibrated_range(*e.node)) return;
  graph::set_calibrated_range(*e.node, mapped_range(q).range);
}

// The value mx holds for a tensor quantized as `q` from `x`: x, after a
// ReLU when the quantization saturates negative values (its range starts
// at 0) and x may have some. The value's node gets the range.
Symbol quantized_value(ImportContext& c, const std::string& name, const Symbol& x,
                       const Quantization& q) {
  Symbol v = x;
  if (starts_at_zero(q) && !nonnegative(x))
    v = c.op("Activation", name + "_relu", {{"act_type", "relu"}}, {x});
  set_range(v, q);
  return v;
}

// The name of `onnx_name` (an integer initializer) without ONNX Runtime's
// "_quantized" suffix, when the graph does not use that name.
std::optional<std::string> plain_name(const ImportContext& c, const std::string& onnx_name) {
  const std::string suffix = "_quantized";
  if (onnx_name.size() <= suffix.size() ||
      onnx_name.compare(onnx_name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return std::nullopt;
  const std::string base = onnx_name.substr(0, onnx_name.size() - suffix.size());
  if (c.onnx_names.count(base) || c.constants.count(base) || c.tensors.count(base))
    return std::nullopt;
  return base;
}

// A new constant's name for the real values of `onnx_name`.
std::string constant_name(ImportContext& c, const std::string& onnx_name) {
  return c.unique(plain_name(c, onnx_name).value_or(onnx_name + "_dequantized"));
}

DType stored_type(ImportContext& c, const std::string& name) {
  if (auto q = c.quantized.find(name); q != c.quantized.end()) return q->second.type;
  return c.dtype(name);
}

// The float32 value of input k of a QLinear operator, quantized as `q`, by
// the name of a tensor or constant: a quantized tensor's value (made with
// the same quantization), an integer constant dequantized, or an integer
// graph input dequantized at run time. `axis`: of a constant's per-slice
// quantization.
std::string real_input(ImportContext& c, const ImportNode& n, int k, const Quantization& q,
                       int64_t axis) {
  const std::string name = n.input(k);
  if (auto held = c.quantized.find(name); held != c.quantized.end()) {
    if (!(held->second == q))
      unsupported(str("input '", name,
                      "' is read with another scale or zero point than it was "
                      "quantized with"));
    return name;
  }
  if (const NDArray* a = c.constant(name); a && !c.tensors.count(name)) {
    if (a->dtype() != q.type)
      throw InputError(str("input '", name, "' is ", dtype_name(a->dtype()),
                           " but its zero point is ", dtype_name(q.type)));
    const std::string made = constant_name(c, name);
    c.constants[made] = dequantize_array(*a, q, axis);
    return made;
  }
  const DType t = c.dtype(name);
  if (t != DType::kUint8 && t != DType::kInt8 && t != DType::kInt32)
    throw InputError(str("input '", name, "' is ", dtype_name(t), ", not an integer tensor"));
  if (!q.per_tensor())
    unsupported(str("per-slice quantization of input '", name, "' computed at run time"));
  // (q - zero_point) * scale at run time.
  Symbol v = c.op("Cast", n.name + "_real", {{"dtype", "float32"}}, {c.get(name)});
  if (q.zero_point[0] != 0)
    v = c.op("_minus_scalar", n.name + "_shift",
             {{"scalar", std::to_string(q.zero_point[0])}, {"is_int", "False"}}, {v});
  v = c.op("_mul_scalar", n.name + "_scale", {{"scalar", number(q.scale[0])}, {"is_int", "False"}},
           {v});
  const std::string made = c.unique(n.name + "_" + std::to_string(k) + "_real");
  c.tensors[made] = v;
  return made;
}

// A QLinear operator's output: quantized as `q`, of real value `value`.
std::vector<Symbol> quantized_output(ImportContext& c, const ImportNode& n, const Symbol& value,
                                     const Quantization& q) {
  c.quantized[n.proto.output(0)] = q;
  return {quantized_value(c, n.name, value, q)};
}

std::vector<Symbol> quantize_linear(ImportContext& c, const ImportNode& n) {
  const std::string x = n.input(0);
  const Quantization q = read_quantization(c, n, 1, 2, DType::kUint8, n.i("axis", 1));
  if (const NDArray* a = c.constant(x); a && !c.tensors.count(x)) {
    c.constants[n.proto.output(0)] = quantize_array(*a, q, q.axis);
    return {};
  }
  if (c.quantized.count(x) || c.dtype(x) != DType::kFloat32)
    unsupported(str("QuantizeLinear of '", x, "', which is not float32"));
  return quantized_output(c, n, c.get(x), q);
}

std::vector<Symbol> dequantize_linear(ImportContext& c, const ImportNode& n) {
  const std::string x = n.input(0);
  const Quantization q = read_quantization(c, n, 1, 2, stored_type(c, x), n.i("axis", 1));
  const std::string out = n.proto.output(0);
  if (auto held = c.quantized.find(x); held != c.quantized.end()) {
    if (!(held->second == q))
      unsupported(str("DequantizeLinear of '", x,
                      "' with another scale or zero point than it was quantized with"));
    c.requantized[out] = q;  // DequantizeLinear(QuantizeLinear(...)): QDQ
    return {c.get(x)};
  }
  if (const NDArray* a = c.constant(x); a && !c.tensors.count(x)) {
    if (a->dtype() != q.type)
      throw InputError(str("'", x, "' is ", dtype_name(a->dtype()), " but its zero point is ",
                           dtype_name(q.type)));
    c.constants[out] = dequantize_array(*a, q, q.axis);
    c.dequantized_constants[out] = q;
    // The weights' variable without ONNX Runtime's suffix where that name is free.
    if (auto name = plain_name(c, x)) c.variable_names[out] = *name;
    return {};
  }
  if (q.per_tensor()) return {c.get(real_input(c, n, 0, q, q.axis))};
  // Per slice at run time: (x - zero_point) * scale with the slices broadcast.
  const int rank = c.rank(x);
  const int64_t axis = positive(q.axis, rank);
  std::vector<int64_t> dims(static_cast<size_t>(rank), 1);
  dims[static_cast<size_t>(axis)] = static_cast<int64_t>(q.scale.size());
  std::vector<float> zero(q.zero_point.begin(), q.zero_point.end());
  const std::string zero_name = c.unique(n.name + "_zero_point"),
                    scale_name = c.unique(n.name + "_scale");
  c.constants[zero_name] = NDArray::from_vector(Shape(dims), zero);
  c.constants[scale_name] = NDArray::from_vector(Shape(dims), q.scale);
  Symbol v = c.op("Cast", n.name + "_real", {{"dtype", "float32"}}, {c.get(x)});
  v = c.op("broadcast_sub", n.name + "_shift", {}, {v, c.get(zero_name)});
  return {c.op("broadcast_mul", n.name, {}, {v, c.get(scale_name)})};
}

// Marks `conv` int8 when it reads its data quantized as `data_q` (per
// tensor) and its weights are int8 with zero point 0; warns otherwise.
void mark_int8(ImportContext& c, const ImportNode& n, const Symbol& conv,
               const Quantization& data_q, const Quantization* weight_q) {
  const std::string who = str("node '", n.proto.name().empty() ? n.name : n.proto.name(), "' (",
                              n.proto.op_type(), ")");
  auto keep_float = [&](const std::string& why) {
    c.warnings.push_back(who + " runs in float32: " + why);
  };
  if (weight_q == nullptr) return keep_float("its weights are not quantized");
  if (weight_q->type != DType::kInt8 ||
      std::any_of(weight_q->zero_point.begin(), weight_q->zero_point.end(),
                  [](int64_t z) { return z != 0; }))
    return keep_float(str("its weights are ", dtype_name(weight_q->type),
                          " with a nonzero zero point, and mx's int8 convolutions take "
                          "symmetric int8 weights"));
  if (!data_q.per_tensor())
    return keep_float("its input is quantized per channel (mx quantizes it per tensor)");
  const graph::Node& node = *conv.outputs()[0].node;
  const graph::NodeEntry& data = node.inputs.at(0);
  if (data.index != 0)
    return keep_float("its input is not the first output of the layer making it");
  const bool inner_product = node.op->def().name == "FullyConnected";
  if (inner_product && c.rank(n.input(0)) != 2)
    return keep_float("mx runs FullyConnected layers of 2-D data in int8");
  if (!inner_product && c.rank(n.input(0)) != 4)
    return keep_float("mx runs 2-D convolutions in int8");
  const MappedRange want = mapped_range(data_q);
  auto have = graph::calibrated_range(*data.node);
  if (!have || have->min != want.range.min || have->max != want.range.max)
    return keep_float("its input is quantized with other scales elsewhere");
  if (!want.exact)
    c.warnings.push_back(str(who, ": its input is quantized with zero point ", data_q.zero_point[0],
                             " (asymmetric); mx holds it as symmetric int8 over the same range [",
                             want.range.min, ", ", want.range.max,
                             "], in steps up to twice as large"));
  conv.outputs()[0].node->attrs[graph::kQuantizeAttr] = "int8";
}

std::vector<Symbol> qlinear_conv(ImportContext& c, const ImportNode& n) {
  const Quantization xq = read_quantization(c, n, 1, 2, stored_type(c, n.input(0)), 1);
  const Quantization wq = read_quantization(c, n, 4, 5, c.dtype(n.input(3)), 0);
  const Quantization yq = read_quantization(c, n, 6, 7, DType::kUint8, 1);
  if (!xq.per_tensor() || !yq.per_tensor())
    throw InputError("QLinearConv's input and output scales are one value each");
  if (!c.constant(n.input(3))) unsupported("the weights must be a constant");
  const std::string x = real_input(c, n, 0, xq, 1);
  const std::string w = real_input(c, n, 3, wq, 0);
  std::string b;
  if (!n.input(8).empty()) {
    // int32 in the units of input scale * weight scale.
    const NDArray& bias = need_constant(c, n, 8, "the bias");
    Quantization bq;
    bq.type = DType::kInt32;
    for (float ws : wq.scale) bq.scale.push_back(xq.scale[0] * ws);
    bq.zero_point.assign(bq.scale.size(), 0);
    if (bias.dtype() != DType::kInt32) throw InputError("the bias must be int32");
    b = constant_name(c, n.input(8));
    c.constants[b] = dequantize_array(bias, bq, 0);
  }
  Symbol out = import_conv(c, n, false, {x, w, b})[0];
  set_range(c.get(x), xq);
  mark_int8(c, n, out, xq, &wq);
  return quantized_output(c, n, out, yq);
}

// QLinearMatMul's b (and a) scales: one value, or one per column of b (per
// row of a). 2-D data times a constant matrix imports as FullyConnected.
std::vector<Symbol> qlinear_matmul(ImportContext& c, const ImportNode& n) {
  const int ra = c.rank(n.input(0)), rb = c.rank(n.input(3));
  const Quantization aq = read_quantization(c, n, 1, 2, stored_type(c, n.input(0)), ra - 2);
  const Quantization bq = read_quantization(c, n, 4, 5, stored_type(c, n.input(3)), rb - 1);
  const Quantization yq = read_quantization(c, n, 6, 7, DType::kUint8, 1);
  if (!yq.per_tensor()) throw InputError("QLinearMatMul's output scale is one value");
  const std::string a = real_input(c, n, 0, aq, ra - 2), b = real_input(c, n, 3, bq, rb - 1);
  // 2-D data times a constant matrix: a FullyConnected layer with b
  // transposed as its weights, which mx runs in int8 where b is int8 with
  // zero point 0 (per tensor, or per column of b: per row of the weights).
  const NDArray* b_real = c.constant(b);
  if (ra == 2 && rb == 2 && b_real != nullptr && !c.tensors.count(n.input(3))) {
    const std::string w = c.unique(b + "_transposed");
    c.constants[w] = op::invoke("transpose", {*b_real})[0];
    Quantization wq = bq;
    wq.axis = 0;
    Symbol out = c.op("FullyConnected", n.name,
                      {{"num_hidden", std::to_string(b_real->shape()[1])}, {"no_bias", "True"}},
                      {c.get(a), c.get(w)});
    set_range(c.get(a), aq);
    mark_int8(c, n, out, aq, &wq);
    return quantized_output(c, n, out, yq);
  }
  return quantized_output(c, n, import_matmul(c, n, a, b)[0], yq);
}

// com.microsoft QLinearAdd: A, its scale and zero point, B, ..., C's.
std::vector<Symbol> qlinear_add(ImportContext& c, const ImportNode& n) {
  const Quantization aq = read_quantization(c, n, 1, 2, stored_type(c, n.input(0)), 1);
  const Quantization bq = read_quantization(c, n, 4, 5, stored_type(c, n.input(3)), 1);
  const Quantization yq = read_quantization(c, n, 6, 7, DType::kUint8, 1);
  if (!aq.per_tensor() || !bq.per_tensor() || !yq.per_tensor())
    throw InputError("QLinearAdd's scales are one value each");
  const std::string a = real_input(c, n, 0, aq, 1), b = real_input(c, n, 3, bq, 1);
  return quantized_output(c, n, import_arithmetic(c, n, "add", a, b)[0], yq);
}

// com.microsoft QLinearGlobalAveragePool (channels first).
std::vector<Symbol> qlinear_global_average_pool(ImportContext& c, const ImportNode& n) {
  if (n.i("channels_last", 0) != 0) unsupported("channels_last");
  const Quantization xq = read_quantization(c, n, 1, 2, stored_type(c, n.input(0)), 1);
  const Quantization yq = read_quantization(c, n, 3, 4, DType::kUint8, 1);
  if (!xq.per_tensor() || !yq.per_tensor())
    throw InputError("QLinearGlobalAveragePool's scales are one value each");
  const std::string x = real_input(c, n, 0, xq, 1);
  const int rank = c.rank(x);
  if (rank != 3 && rank != 4) unsupported(str("global pooling of rank ", rank));
  Symbol pooled = c.op(
      "Pooling", n.name,
      {{"global_pool", "True"}, {"pool_type", "avg"}, {"kernel", rank == 3 ? "(1,)" : "(1, 1)"}},
      {c.get(x)});
  return quantized_output(c, n, pooled, yq);
}

}  // namespace

void mark_int8_layer(ImportContext& c, const ImportNode& n, const Symbol& conv) {
  auto data = c.requantized.find(n.input(0));
  auto weights = c.dequantized_constants.find(n.input(1));
  if (data == c.requantized.end()) return;  // a float32 convolution
  mark_int8(c, n, conv, data->second,
            weights == c.dequantized_constants.end() ? nullptr : &weights->second);
}

void add_quantized_import_rules(std::map<std::string, ImportOp>& r) {
  const std::set<int> all{0, 1, 2, 3, 4, 5, 6, 7, 8};
  r["QuantizeLinear"] = {quantize_linear, {1, 2}, false, true};
  r["DequantizeLinear"] = {dequantize_linear, {0, 1, 2}, false, true};
  r["QLinearConv"] = {qlinear_conv, all, false, true};
  r["QLinearMatMul"] = {qlinear_matmul, all, false, true};
  r["com.microsoft.QLinearAdd"] = {qlinear_add, all, false, true};
  r["com.microsoft.QLinearGlobalAveragePool"] = {qlinear_global_average_pool, all, false, true};
  // Dequantization commutes with these: a quantized input gives outputs
  // quantized alike (MaxPool on uint8 or int8 tensors, and reshapes).
  for (const char* op : {"MaxPool", "Reshape", "Flatten", "Transpose", "Squeeze", "Unsqueeze",
                         "Identity", "Slice", "Split"}) {
    auto it = r.find(op);
    if (it != r.end()) it->second.keeps_quantization = true;
  }
}

}  // namespace mx::onnx
