#include "onnx/rnn_weights.h"

#include "base/error.h"
#include "base/strings.h"

namespace mx::onnx {
namespace {

// ONNX's gate j is MXNet's gate kToOnnx[j].
std::vector<int64_t> mxnet_gate_of_onnx(const std::string& mode) {
  if (mode == "lstm") return {0, 3, 1, 2};  // i,o,f,c from i,f,g,o
  if (mode == "gru") return {1, 0, 2};      // z,r,h from r,z,n
  return {0};
}

// Where each (layer, direction)'s blocks start in MXNet's flat vector.
struct FlatOffsets {
  int64_t i2h = 0, h2h = 0, bias_i2h = 0, bias_h2h = 0;
};

FlatOffsets offsets(const RnnShape& rnn, int64_t layer, int64_t direction) {
  const int64_t gh = rnn.gates() * rnn.hidden;
  int64_t at = 0;
  FlatOffsets o;
  for (int64_t l = 0; l < rnn.layers; ++l)
    for (int64_t d = 0; d < rnn.directions; ++d) {
      if (l == layer && d == direction) {
        o.i2h = at;
        o.h2h = at + gh * rnn.layer_input(l);
      }
      at += gh * (rnn.layer_input(l) + rnn.hidden);
    }
  for (int64_t l = 0; l < rnn.layers; ++l)
    for (int64_t d = 0; d < rnn.directions; ++d) {
      if (l == layer && d == direction) {
        o.bias_i2h = at;
        o.bias_h2h = at + gh;
      }
      at += 2 * gh;
    }
  return o;
}

// Copies `gates` blocks of `block` floats from `from` (at `from_at`) to
// `to` (at `to_at`), block j of `to` being block order[j] of `from`; with
// `inverse`, block order[j] of `to` is block j of `from`.
void copy_gates(const std::vector<float>& from, int64_t from_at, std::vector<float>& to,
                int64_t to_at, int64_t block, const std::vector<int64_t>& order, bool inverse) {
  for (size_t j = 0; j < order.size(); ++j) {
    const int64_t src = inverse ? static_cast<int64_t>(j) : order[j];
    const int64_t dst = inverse ? order[j] : static_cast<int64_t>(j);
    for (int64_t k = 0; k < block; ++k)
      to[to_at + dst * block + k] = from[from_at + src * block + k];
  }
}

}  // namespace

int64_t RnnShape::gates() const {
  if (mode == "lstm") return 4;
  if (mode == "gru") return 3;
  return 1;
}

int64_t RnnShape::flat_size() const {
  int64_t n = 0;
  for (int64_t l = 0; l < layers; ++l)
    n += directions * gates() * hidden * (layer_input(l) + hidden + 2);
  return n;
}

OnnxRnnLayer onnx_layer(const RnnShape& rnn, const NDArray& flat, int64_t layer) {
  if (flat.size() != rnn.flat_size())
    throw InputError(str("the RNN's parameters hold ", flat.size(), " values; ", rnn.mode, " with ",
                         rnn.layers, " layer(s), ", rnn.directions, " direction(s), state size ",
                         rnn.hidden, " and input size ", rnn.input, " needs ", rnn.flat_size()));
  const std::vector<float> p = flat.to_vector<float>();
  const int64_t g = rnn.gates(), h = rnn.hidden, in = rnn.layer_input(layer), d_n = rnn.directions;
  const auto order = mxnet_gate_of_onnx(rnn.mode);
  std::vector<float> w(d_n * g * h * in), r(d_n * g * h * h), b(d_n * 2 * g * h);
  for (int64_t d = 0; d < d_n; ++d) {
    const FlatOffsets o = offsets(rnn, layer, d);
    copy_gates(p, o.i2h, w, d * g * h * in, h * in, order, false);
    copy_gates(p, o.h2h, r, d * g * h * h, h * h, order, false);
    copy_gates(p, o.bias_i2h, b, d * 2 * g * h, h, order, false);
    copy_gates(p, o.bias_h2h, b, d * 2 * g * h + g * h, h, order, false);
  }
  return {NDArray::from_vector<float>(Shape{d_n, g * h, in}, std::move(w)),
          NDArray::from_vector<float>(Shape{d_n, g * h, h}, std::move(r)),
          NDArray::from_vector<float>(Shape{d_n, 2 * g * h}, std::move(b))};
}

NDArray mxnet_flat(const RnnShape& rnn, const OnnxRnnLayer& layer) {
  MX_CHECK(rnn.layers == 1);
  const int64_t g = rnn.gates(), h = rnn.hidden, in = rnn.input, d_n = rnn.directions;
  const std::vector<float> w = layer.w.to_vector<float>(), r = layer.r.to_vector<float>(),
                           b = layer.b.to_vector<float>();
  const auto order = mxnet_gate_of_onnx(rnn.mode);
  std::vector<float> p(rnn.flat_size());
  for (int64_t d = 0; d < d_n; ++d) {
    const FlatOffsets o = offsets(rnn, 0, d);
    copy_gates(w, d * g * h * in, p, o.i2h, h * in, order, true);
    copy_gates(r, d * g * h * h, p, o.h2h, h * h, order, true);
    copy_gates(b, d * 2 * g * h, p, o.bias_i2h, h, order, true);
    copy_gates(b, d * 2 * g * h + g * h, p, o.bias_h2h, h, order, true);
  }
  return NDArray::from_vector<float>(Shape{rnn.flat_size()}, std::move(p));
}

}  // namespace mx::onnx
