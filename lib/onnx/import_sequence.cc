// Import rules of the sequence operators: ONNX LSTM, GRU and RNN become
// MXNet's RNN operator (one layer, its flat parameter vector built from W, R
// and B: rnn_weights.h), LayerNormalization becomes LayerNorm (reshaped to
// one axis where ONNX normalizes over several).
#include <algorithm>

#include "base/strings.h"
#include "onnx/import_util.h"
#include "onnx/rnn_weights.h"

namespace mx::onnx {
namespace {

using graph::Symbol;

// The activations MXNet's cells use, as ONNX names them per direction.
void check_activations(const ImportNode& n, const std::vector<std::string>& expected,
                       int64_t directions) {
  const auto* a = n.attr("activations");
  if (a == nullptr) return;
  std::vector<std::string> want;
  for (int64_t d = 0; d < directions; ++d)
    want.insert(want.end(), expected.begin(), expected.end());
  std::vector<std::string> got(a->strings().begin(), a->strings().end());
  for (auto& s : got)
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  for (auto& s : want)
    for (auto& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (got != want)
    unsupported("activations " + join(got, ", ") + " (mx's cells use " + join(want, ", ") + ")");
}

// A zero initial state (D, N, H) shaped after the data (T, N, I).
Symbol zero_state(ImportContext& c, const ImportNode& n, const Symbol& x, int64_t directions,
                  int64_t hidden, const std::string& which) {
  const std::string base = n.name + "_" + which;
  Symbol first =
      c.op("slice_axis", base + "_t0", {{"axis", "0"}, {"begin", "0"}, {"end", "1"}}, {x});
  first = c.op("slice_axis", base + "_i0", {{"axis", "2"}, {"begin", "0"}, {"end", "1"}}, {first});
  Symbol zero = c.op("zeros_like", base + "_zero", {}, {first});  // (1, N, 1)
  return c.op("tile", base, {{"reps", tuple({directions, 1, hidden})}}, {zero});
}

std::vector<Symbol> recurrent(ImportContext& c, const ImportNode& n, const std::string& mode) {
  const std::string op = n.proto.op_type();
  const int64_t hidden = n.i("hidden_size", 0);
  if (hidden <= 0) unsupported(op + " without hidden_size");
  const std::string direction = n.s("direction", "forward");
  if (direction != "forward" && direction != "bidirectional")
    unsupported("direction " + direction + " (mx runs forward and bidirectional layers)");
  const int64_t directions = direction == "bidirectional" ? 2 : 1;
  if (n.has("clip")) unsupported(op + " with clip");
  if (n.i("input_forget", 0) != 0) unsupported("LSTM with input_forget");
  if (op == "GRU" && n.i("linear_before_reset", 0) != 1)
    unsupported(
        "GRU with linear_before_reset=0 (mx's GRU, as MXNet's and cuDNN's, applies the "
        "reset after the hidden product: linear_before_reset=1)");
  const bool lstm = op == "LSTM";
  if (lstm && !n.input(7).empty()) unsupported("LSTM with peepholes (P)");
  std::string rnn_mode = mode;
  if (op == "LSTM") {
    check_activations(n, {"Sigmoid", "Tanh", "Tanh"}, directions);
  } else if (op == "GRU") {
    check_activations(n, {"Sigmoid", "Tanh"}, directions);
  } else {
    const auto* a = n.attr("activations");
    const std::string first = a != nullptr && a->strings_size() > 0 ? a->strings(0) : "Tanh";
    rnn_mode = first == "Relu" ? "rnn_relu" : "rnn_tanh";
    check_activations(n, {first == "Relu" ? "Relu" : "Tanh"}, directions);
  }
  const bool batch_first = n.i("layout", 0) == 1;

  RnnShape rnn;
  rnn.mode = rnn_mode;
  rnn.hidden = hidden;
  rnn.directions = directions;
  OnnxRnnLayer weights;
  weights.w = need_constant(c, n, 1, "W");
  weights.r = need_constant(c, n, 2, "R");
  rnn.input = weights.w.shape().ndim() == 3 ? weights.w.shape()[2] : 0;
  const int64_t gh = rnn.gates() * hidden;
  if (weights.w.shape() != Shape{directions, gh, rnn.input} ||
      weights.r.shape() != Shape{directions, gh, hidden})
    throw InputError(str(op, ": W ", weights.w.shape().to_string(), " and R ",
                         weights.r.shape().to_string(), " do not fit hidden_size ", hidden, " and ",
                         directions, " direction(s)"));
  if (!n.input(3).empty()) {
    weights.b = need_constant(c, n, 3, "B");
    if (weights.b.shape() != Shape{directions, 2 * gh})
      throw InputError(str(op, ": B ", weights.b.shape().to_string(), " should be (", directions,
                           ", ", 2 * gh, ")"));
  } else {
    weights.b = NDArray::zeros(Shape{directions, 2 * gh});
  }
  const std::string flat_name = c.unique(n.name + "_parameters");
  c.constants[flat_name] = mxnet_flat(rnn, weights);

  Symbol x = c.get(n.input(0));
  if (batch_first) x = c.op("SwapAxis", n.name + "_tnc", {{"dim1", "0"}, {"dim2", "1"}}, {x});
  auto state = [&](int k, const std::string& which) {
    if (n.input(k).empty()) return zero_state(c, n, x, directions, hidden, which);
    Symbol s = c.get(n.input(k));
    // batch-first states are (N, D, H)
    return batch_first ? c.op("SwapAxis", n.name + "_" + which + "_dnh",
                              {{"dim1", "0"}, {"dim2", "1"}}, {s})
                       : s;
  };
  std::vector<Symbol> inputs{x, c.get(flat_name), state(5, "h0")};
  if (lstm) inputs.push_back(state(6, "c0"));
  const bool lengths = !n.input(4).empty();
  if (lengths)
    inputs.push_back(
        c.op("Cast", n.name + "_lengths", {{"dtype", "float32"}}, {c.get(n.input(4))}));
  const bool states_used = n.num_outputs_used() > 1 || n.proto.output_size() > 1;
  Symbol out = c.op("RNN", n.name,
                    {{"mode", rnn_mode},
                     {"state_size", std::to_string(hidden)},
                     {"num_layers", "1"},
                     {"bidirectional", boolean(directions == 2)},
                     {"state_outputs", boolean(states_used)},
                     {"use_sequence_length", boolean(lengths)}},
                    inputs);
  // ONNX's Y: (T, D, N, H), or (N, T, D, H) batch-first.
  Symbol y =
      reshape(c, n.name + "_y_split", {0, 0, directions, hidden}, states_used ? out[0] : out);
  y = c.op("transpose", n.name + "_y", {{"axes", batch_first ? "(1, 0, 2, 3)" : "(0, 2, 1, 3)"}},
           {y});
  std::vector<Symbol> result{y};
  if (states_used) {
    for (size_t k = 1; k < (lstm ? 3u : 2u); ++k) {
      Symbol s = out[k];
      if (batch_first)
        s = c.op("SwapAxis", str(n.name, "_state", k), {{"dim1", "0"}, {"dim2", "1"}}, {s});
      result.push_back(s);
    }
  }
  return result;
}

std::vector<Symbol> layer_normalization(ImportContext& c, const ImportNode& n) {
  const Shape x = c.shape(n.input(0));
  const int rank = x.ndim();
  const int64_t axis = positive(n.i("axis", -1), rank);
  if (n.i("stash_type", 1) != 1) unsupported("LayerNormalization with stash_type other than 1");
  const bool statistics = n.num_outputs_used() > 1;  // Mean and InvStdDev asked for
  const std::string eps = number(n.f("epsilon", 1e-5f));
  Symbol data = c.get(n.input(0));
  Symbol gamma = c.get(n.input(1));
  Symbol beta;
  const bool inner = axis != rank - 1;
  // ONNX normalizes over [axis, rank): flatten those axes into one.
  std::vector<int64_t> back;  // the shape to restore: 0 copies, the normalized dims as they were
  if (inner) {
    for (int64_t a = 0; a < rank; ++a) {
      if (a >= axis && x[static_cast<int>(a)] < 0)
        unsupported("LayerNormalization over axes of unknown size");
      back.push_back(a < axis ? 0 : x[static_cast<int>(a)]);
    }
    std::vector<int64_t> flat(static_cast<size_t>(axis), 0);
    flat.push_back(-1);
    data = reshape(c, n.name + "_flat", flat, data);
    gamma = reshape(c, n.name + "_gamma", {-1}, gamma);
  }
  if (!n.input(2).empty()) {
    beta = c.get(n.input(2));
    if (inner) beta = reshape(c, n.name + "_beta", {-1}, beta);
  } else {
    beta = c.op("zeros_like", n.name + "_beta_zero", {}, {gamma});
  }
  Symbol norm = c.op("LayerNorm", inner ? n.name + "_normalized" : n.name,
                     {{"axis", "-1"}, {"eps", eps}, {"output_mean_var", boolean(statistics)}},
                     {data, gamma, beta});
  Symbol y = statistics ? norm[0] : norm;
  if (inner) y = reshape(c, n.name, back, y);
  if (!statistics) return {y};
  // Mean and 1/std with the normalized axes kept as 1, as ONNX shapes them.
  std::vector<int64_t> kept(static_cast<size_t>(axis), 0);
  kept.resize(static_cast<size_t>(rank), 1);
  Symbol mean = norm[1], std_dev = norm[2];
  if (inner) {
    mean = reshape(c, n.name + "_mean", kept, mean);
    std_dev = reshape(c, n.name + "_std", kept, std_dev);
  }
  return {y, mean, c.op("reciprocal", n.name + "_inv_std", {}, {std_dev})};
}

}  // namespace

void add_sequence_import_rules(std::map<std::string, ImportOp>& rules) {
  rules["LSTM"] = {[](ImportContext& c, const ImportNode& n) { return recurrent(c, n, "lstm"); },
                   {4}};
  rules["GRU"] = {[](ImportContext& c, const ImportNode& n) { return recurrent(c, n, "gru"); },
                  {4}};
  rules["RNN"] = {[](ImportContext& c, const ImportNode& n) { return recurrent(c, n, "rnn_tanh"); },
                  {4}};
  rules["LayerNormalization"] = {layer_normalization, {}};
  // Reached only where constant folding could not compute them.
  rules["Shape"] = {[](ImportContext&, const ImportNode&) -> std::vector<Symbol> {
                      unsupported("Shape of a tensor with a symbolic dimension");
                    },
                    {0}};
  rules["Expand"] = {
      [](ImportContext& c, const ImportNode& n) -> std::vector<Symbol> {
        // A constant target shape: broadcast_to over the known result.
        const NDArray& dims = need_constant(c, n, 1, "Expand's shape");
        std::vector<int64_t> want = int_values(dims);
        Shape in = c.shape(n.input(0));
        std::vector<int64_t> have = in.to_vector();
        if (want.size() < have.size() || std::count(have.begin(), have.end(), -1) > 0)
          unsupported("Expand of a tensor of unknown or larger rank");
        have.insert(have.begin(), want.size() - have.size(), 1);
        Symbol x = reshape(c, n.name + "_rank", have, c.get(n.input(0)));
        for (size_t i = 0; i < want.size(); ++i) want[i] = std::max(want[i], have[i]);
        return {c.op("broadcast_to", n.name, {{"shape", tuple(want)}}, {x})};
      },
      {1}};
}

}  // namespace mx::onnx
