// Export rules of the sequence operators: RNN as ONNX LSTM/GRU/RNN nodes
// (one per layer, weights rewritten into ONNX's layout: rnn_weights.h),
// LayerNorm as LayerNormalization (opset 17, last axis) or as its formula,
// and the interleaved self-attention products as Reshape/Slice/Transpose/
// MatMul, which any ONNX runtime (and mx's importer) runs.
#include <cmath>

#include "onnx/export_ops.h"
#include "onnx/rnn_weights.h"
#include "op/nn/rnn_param.h"

namespace mx::onnx {
namespace {

using ::onnx::NodeProto;

int64_t integer(const ExportNode& e, const std::string& key) {
  return static_cast<int64_t>(e.number(key));
}

// x[begin:end] along axis 0 (opset 10+ Slice: bounds as inputs).
std::string slice_axis0(ExportContext& c, const std::string& x, int64_t begin, int64_t end,
                        const std::string& name) {
  const std::string out = c.unique(name);
  c.add("Slice", out,
        {x, c.ints(name + "_starts", {begin}), c.ints(name + "_ends", {end}),
         c.ints(name + "_axes", {0})},
        {out});
  return out;
}

std::string transpose(ExportContext& c, const std::string& x, const std::vector<int64_t>& perm,
                      const std::string& name, const std::string& out_name = "") {
  const std::string out = out_name.empty() ? c.unique(name) : out_name;
  set_ints(c.add("Transpose", name, {x}, {out}), "perm", perm);
  return out;
}

// Reshape to `dims` (0 copies the input's dimension, -1 is inferred).
std::string reshape(ExportContext& c, const std::string& x, const std::vector<int64_t>& dims,
                    const std::string& name, const std::string& out_name = "") {
  const std::string out = out_name.empty() ? c.unique(name) : out_name;
  c.add("Reshape", name, {x, c.ints(name + "_shape", dims)}, {out});
  return out;
}

void export_rnn(ExportContext& c, const ExportNode& e) {
  const auto& p = e.param<op::RnnParam>();
  const std::string mode = e.get("mode");  // MXNet's spelling, as rnn_weights.h reads it
  if (p.projection_size)
    throw UnsupportedExport("RNN with projection_size (LSTMP): ONNX's LSTM has no projection");
  if (p.lstm_state_clip_min || p.lstm_state_clip_max)
    throw UnsupportedExport(
        "RNN with lstm_state_clip_min/max: ONNX's LSTM 'clip' bounds the gates' inputs, not the "
        "cell state");
  const Shape& x = c.shape_of(e.inputs[0]);
  if (x.ndim() != 3) throw UnsupportedExport("RNN data of rank " + std::to_string(x.ndim()));
  RnnShape rnn;
  rnn.mode = mode;
  rnn.hidden = p.state_size;
  rnn.layers = p.num_layers;
  rnn.directions = p.directions();
  rnn.input = x[2];
  const NDArray* flat = c.array(e.inputs[1]);
  if (flat == nullptr)
    throw UnsupportedExport(
        "the RNN's parameters must be a stored array (a checkpoint's), not computed in the graph");
  const bool lstm = p.lstm(), gru = p.mode == op::RnnMode::kGru;
  const std::string onnx_op = lstm ? "LSTM" : gru ? "GRU" : "RNN";
  const std::string& name = e.name();
  const int64_t d_n = rnn.directions;

  std::string lengths;  // ONNX wants int32 lengths
  if (p.use_sequence_length) {
    lengths = c.unique(name + "_lengths");
    set_int(c.add("Cast", lengths, {e.inputs[lstm ? 4 : 3]}, {lengths}), "to",
            ::onnx::TensorProto::INT32);
  }
  std::string layer_in = e.inputs[0];
  std::vector<std::string> last_h, last_c;
  for (int64_t l = 0; l < rnn.layers; ++l) {
    const std::string ln = str(name, "_l", l);
    const OnnxRnnLayer weights = onnx_layer(rnn, *flat, l);
    std::vector<std::string> in{layer_in,
                                c.initializer(ln + "_W", weights.w),
                                c.initializer(ln + "_R", weights.r),
                                c.initializer(ln + "_B", weights.b),
                                lengths,
                                slice_axis0(c, e.inputs[2], l * d_n, (l + 1) * d_n, ln + "_h0")};
    if (lstm) in.push_back(slice_axis0(c, e.inputs[3], l * d_n, (l + 1) * d_n, ln + "_c0"));
    const std::string y = c.unique(ln + "_Y");
    std::vector<std::string> outs{y, c.unique(ln + "_Y_h")};
    if (lstm) outs.push_back(c.unique(ln + "_Y_c"));
    NodeProto* n = c.add(onnx_op, ln, in, outs);
    set_int(n, "hidden_size", rnn.hidden);
    set_string(n, "direction", d_n == 2 ? "bidirectional" : "forward");
    if (gru) set_int(n, "linear_before_reset", 1);  // MXNet's GRU
    if (onnx_op == "RNN")
      set_strings(n, "activations",
                  std::vector<std::string>(d_n, p.mode == op::RnnMode::kRnnRelu ? "Relu" : "Tanh"));
    last_h.push_back(outs[1]);
    if (lstm) last_c.push_back(outs[2]);
    // Y (T, D, N, H) -> (T, N, D*H), MXNet's output and the next layer's input.
    const std::string t = transpose(c, y, {0, 2, 1, 3}, ln + "_Y_tnd");
    const bool last = l + 1 == rnn.layers;
    layer_in = reshape(c, t, {0, 0, -1}, ln + "_out", last ? e.outputs[0] : "");
  }
  // State outputs: the layers' final states stacked, as MXNet's (L*D, N, H).
  auto stack = [&](const std::vector<std::string>& parts, const std::string& out) {
    if (parts.size() == 1) {
      c.add("Identity", out, {parts[0]}, {out});
      return;
    }
    set_int(c.add("Concat", out, parts, {out}), "axis", 0);
  };
  if (e.outputs.size() > 1) stack(last_h, e.outputs[1]);
  if (e.outputs.size() > 2 && lstm) stack(last_c, e.outputs[2]);
}

void export_layer_norm(ExportContext& c, const ExportNode& e) {
  const Shape& x = c.shape_of(e.inputs[0]);
  const int64_t rank = x.ndim();
  int64_t axis = integer(e, "axis");
  if (axis < 0) axis += rank;
  const float eps = static_cast<float>(e.number("eps"));
  if (e.outputs.size() > 1)
    throw UnsupportedExport("LayerNorm with output_mean_var (its mean and std outputs)");
  const std::string& name = e.name();
  if (c.opset >= 17 && axis == rank - 1) {
    NodeProto* n =
        c.add("LayerNormalization", name, {e.inputs[0], e.inputs[1], e.inputs[2]}, e.outputs);
    set_int(n, "axis", -1);
    set_float(n, "epsilon", eps);
    return;
  }
  // Before opset 17 (or along an inner axis): the formula, in float32.
  auto reduce_mean = [&](const std::string& in, const std::string& suffix) {
    const std::string out = c.unique(name + suffix);
    NodeProto* n = c.add("ReduceMean", out, {in}, {out});
    set_ints(n, "axes", {axis});
    set_int(n, "keepdims", 1);
    return out;
  };
  auto binary = [&](const char* op, const std::string& a, const std::string& b,
                    const std::string& suffix, const std::string& out_name = "") {
    const std::string out = out_name.empty() ? c.unique(name + suffix) : out_name;
    c.add(op, name + suffix, {a, b}, {out});
    return out;
  };
  const std::string mean = reduce_mean(e.inputs[0], "_mean");
  const std::string centered = binary("Sub", e.inputs[0], mean, "_centered");
  const std::string var = reduce_mean(binary("Mul", centered, centered, "_squares"), "_var");
  const std::string std_dev = c.unique(name + "_std");
  c.add("Sqrt", std_dev, {binary("Add", var, c.scalar(name + "_eps", eps), "_var_eps")}, {std_dev});
  const std::string normalized = binary("Div", centered, std_dev, "_normalized");
  // gamma and beta (C) broadcast along `axis`: (C, 1, ..., 1) for an inner axis.
  std::string gamma = e.inputs[1], beta = e.inputs[2];
  if (axis != rank - 1) {
    std::vector<int64_t> dims(static_cast<size_t>(rank - axis), 1);
    dims[0] = -1;
    gamma = reshape(c, gamma, dims, name + "_gamma");
    beta = reshape(c, beta, dims, name + "_beta");
  }
  binary("Add", binary("Mul", normalized, gamma, "_scaled"), beta, "_shifted", e.outputs[0]);
}

// The per-head (N*heads, T, D) slice `which` (0 query, 1 key, 2 value) of
// interleaved projections (T, N, heads*3*D).
std::string attention_part(ExportContext& c, const ExportNode& e, int64_t which,
                           const std::string& suffix) {
  const Shape& x = c.shape_of(e.inputs[0]);
  const int64_t heads = integer(e, "heads"), t = x[0];
  if (x[2] % (3 * heads) != 0)
    throw UnsupportedExport("the last axis is not a multiple of 3 * heads");
  const int64_t d = x[2] / (3 * heads);
  const std::string& name = e.name();
  const std::string split = reshape(c, e.inputs[0], {0, 0, heads, 3, d}, name + suffix + "_heads");
  const std::string one = c.unique(name + suffix);
  c.add("Slice", one,
        {split, c.ints(one + "_starts", {which}), c.ints(one + "_ends", {which + 1}),
         c.ints(one + "_axes", {3})},
        {one});
  // (T, N, heads, 1, D) -> (N, heads, 1, T, D) -> (N*heads, T, D)
  const std::string moved = transpose(c, one, {1, 2, 3, 0, 4}, one + "_nhtd");
  return reshape(c, moved, {-1, t, d}, one + "_batched");
}

void export_selfatt_qk(ExportContext& c, const ExportNode& e) {
  const Shape& x = c.shape_of(e.inputs[0]);
  const int64_t d = x[2] / (3 * integer(e, "heads"));
  const std::string q = attention_part(c, e, 0, "_q"), k = attention_part(c, e, 1, "_k");
  const std::string scaled = c.unique(e.name() + "_q_scaled");
  c.add("Mul", scaled,
        {q, c.scalar(e.name() + "_scale", static_cast<float>(1.0 / std::sqrt(double(d))))},
        {scaled});
  const std::string kt = transpose(c, k, {0, 2, 1}, e.name() + "_k_t");
  c.add("MatMul", e.name(), {scaled, kt}, e.outputs);
}

void export_selfatt_valatt(ExportContext& c, const ExportNode& e) {
  const Shape& x = c.shape_of(e.inputs[0]);
  const int64_t heads = integer(e, "heads"), t = x[0], d = x[2] / (3 * heads);
  const std::string v = attention_part(c, e, 2, "_v");
  const std::string product = c.unique(e.name() + "_product");
  c.add("MatMul", product, {e.inputs[1], v}, {product});
  // (N*heads, T, D) -> (N, heads, T, D) -> (T, N, heads, D) -> (T, N, heads*D)
  const std::string split = reshape(c, product, {-1, heads, t, d}, e.name() + "_split");
  const std::string moved = transpose(c, split, {2, 0, 1, 3}, e.name() + "_tnhd");
  reshape(c, moved, {0, 0, -1}, e.name(), e.outputs[0]);
}

void export_div_sqrt_dim(ExportContext& c, const ExportNode& e) {
  const Shape& x = c.shape_of(e.inputs[0]);
  const double d = static_cast<double>(x[x.ndim() - 1]);
  c.add("Mul", e.name(),
        {e.inputs[0], c.scalar(e.name() + "_scale", static_cast<float>(1.0 / std::sqrt(d)))},
        e.outputs);
}

// Begin states and other constants: an initializer of the node's shape.
void export_filled(ExportContext& c, const ExportNode& e, float value) {
  const Shape& s = c.shape_of(e.outputs[0]);
  NDArray filled = NDArray::zeros(s);
  if (value != 0) filled = NDArray::from_vector<float>(s, std::vector<float>(s.size(), value));
  c.add("Identity", e.name(), {c.initializer(e.name() + "_value", filled)}, e.outputs);
}

}  // namespace

void add_sequence_export_rules(std::map<std::string, ExportRule>& rules) {
  rules["RNN"] = export_rnn;
  rules["LayerNorm"] = export_layer_norm;
  rules["_contrib_interleaved_matmul_selfatt_qk"] = export_selfatt_qk;
  rules["_contrib_interleaved_matmul_selfatt_valatt"] = export_selfatt_valatt;
  rules["_contrib_div_sqrt_dim"] = export_div_sqrt_dim;
  rules["_zeros"] = [](ExportContext& c, const ExportNode& e) { export_filled(c, e, 0.0f); };
  rules["_ones"] = [](ExportContext& c, const ExportNode& e) { export_filled(c, e, 1.0f); };
}

}  // namespace mx::onnx
