// What a graph pass needs to know of a node to run it inside a fused CPU
// inference graph (graph/fuse_inference.h): the node's forward pass in
// inference described as one layer oneDNN can run. Operators that can be
// fused say so with OpBuilder::inference_layer; the description is
// independent of oneDNN so that every build compiles it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/shape.h"
#include "op/nn/activation_table.h"
#include "op/nn/conv_util.h"
#include "op/nn/pool_spec.h"

namespace mx::op {

enum class LayerKind { kConvolution, kBatchNorm, kActivation, kPooling, kAdd, kFullyConnected };

// One layer in inference. Inputs are the node's (the data first); for a
// convolution the weight and bias, for BatchNorm gamma, beta and the moving
// mean and variance, are read as they are at each call.
struct InferenceLayer {
  LayerKind kind = LayerKind::kConvolution;
  ConvGeom conv;  // kConvolution
  bool conv_bias = false;
  double bn_eps = 1e-3;  // kBatchNorm, channels on axis 1 of 4-D data
  bool bn_fix_gamma = true;
  ActType activation = ActType::kRelu;  // kActivation (a fusable kind)
  PoolSpec pool;                        // kPooling
  // kFullyConnected, of 2-D data (batch, inputs) only: after a Flatten.
  struct {
    int64_t batch = 0, inputs = 0, outputs = 0;
    bool bias = false;
  } fc;
};

// The layer of an addition of `lhs` and `rhs`: a residual connection when
// both are 4-D arrays of one shape (elemwise_add, and broadcast_add, as
// ONNX's Add imports, where it broadcasts nothing); nullopt otherwise.
inline std::optional<InferenceLayer> residual_addition(const Shape& lhs, const Shape& rhs) {
  if (lhs.ndim() != 4 || lhs != rhs) return std::nullopt;
  InferenceLayer layer;
  layer.kind = LayerKind::kAdd;
  return layer;
}

// A fused inference graph: values 0 .. inputs.size()-1 are its inputs (the
// node's inputs, auxiliary states last), layer i writes value
// inputs.size() + i, and `outputs` lists the values it hands back, in plain
// row-major layout.
struct FusedLayer {
  InferenceLayer layer;
  std::vector<int> inputs;
  std::string name;  // the original node's, for messages and listings
  // A convolution (or FullyConnected) computed in int8: its input and weights quantized (the
  // input by the calibrated range of its value, the weights per output
  // channel by their largest magnitude), sums in int32 (graph/quantize_marks.h).
  bool int8 = false;
};
// The range of a value's elements seen in calibration (graph/quantize_marks.h).
struct ValueRange {
  float min = 0, max = 0;
};
// What a fused graph made of its layers, for tests and listings.
struct FusedGraphStats {
  int primitives = 0;  // executed per run, reorders included
  int convolutions = 0;
  int winograd_convolutions = 0;  // of those, the ones oneDNN runs as Winograd
  int int8_convolutions = 0;      // of those, the ones computed in int8
  int fully_connected = 0;        // FullyConnected layers (inner products)
  int int8_fully_connected = 0;   // of those, the ones computed in int8
  int folded_batch_norms = 0;     // into a convolution's weights
  int fused_activations = 0;      // post-ops of convolutions and BatchNorms
  int fused_additions = 0;        // convolutions' sum post-ops
  int reorders = 0;            // data reorders per run (inputs, outputs, layout and type changes)
  size_t workspace_bytes = 0;  // intermediate tensors and scratchpad
  // Convolutions whose weights were folded, quantized or reordered, over all
  // runs so far: once per content of their sources (ContentStamp), not per run.
  int weight_preparations = 0;
};

struct FusedGraphDesc {
  std::vector<Shape> inputs;
  std::vector<FusedLayer> layers;
  std::vector<int> outputs;
  std::vector<Shape> output_shapes;  // per output
  size_t num_aux = 0;                // the last num_aux inputs are auxiliary states
  // Activations and weights in bfloat16 inside the graph (products summed
  // in float32); inputs, outputs and parameters stay float32.
  bool bfloat16 = false;
  // Per value (empty, or num_values() entries): its calibrated range, for
  // the int8 layers' inputs and outputs.
  std::vector<std::optional<ValueRange>> ranges;

  int num_values() const { return static_cast<int>(inputs.size() + layers.size()); }
  int value_of_layer(size_t layer) const { return static_cast<int>(inputs.size() + layer); }
  std::optional<ValueRange> range_of(int value) const {
    return static_cast<size_t>(value) < ranges.size() ? ranges[static_cast<size_t>(value)]
                                                      : std::nullopt;
  }
};

}  // namespace mx::op
