// MXNet's fused RNN parameter vector against ONNX's LSTM/GRU/RNN weights
// (internal to lib/onnx). MXNet keeps one flat vector: every layer's and
// direction's input and hidden weights (i2h then h2h), then their biases in
// the same order; gates LSTM i,f,g,o and GRU r,z,n. ONNX keeps per layer
// W (D, G*H, I), R (D, G*H, H) and B (D, 2*G*H) = [input biases, hidden
// biases], gates LSTM i,o,f,c and GRU z,r,h (linear_before_reset=1 is
// MXNet's GRU).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx::onnx {

struct RnnShape {
  std::string mode;  // lstm, gru, rnn_tanh, rnn_relu (MXNet's names)
  int64_t hidden = 0, layers = 1, directions = 1, input = 0;

  int64_t gates() const;
  int64_t layer_input(int64_t layer) const { return layer == 0 ? input : directions * hidden; }
  // The length of MXNet's parameter vector.
  int64_t flat_size() const;
};

// One layer's weights in ONNX's layout.
struct OnnxRnnLayer {
  NDArray w, r, b;
};

// Layer `layer` of MXNet's flat vector (float32, rnn.flat_size() elements).
OnnxRnnLayer onnx_layer(const RnnShape& rnn, const NDArray& flat, int64_t layer);
// MXNet's flat vector of a one-layer network from ONNX's W, R and B.
NDArray mxnet_flat(const RnnShape& rnn, const OnnxRnnLayer& layer);

}  // namespace mx::onnx
