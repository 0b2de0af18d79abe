// How a graph says it runs in int8 (written by mx-quantize, read by the
// inference fusion pass): the float32 network as it was, with hidden
// attributes that MXNet 1.x reads past (dmlc parameters ignore __name__
// keys), so a quantized checkpoint is still an MXNet float32 checkpoint.
//  - "__quantize__": "int8" on a Convolution (or FullyConnected) node runs
//    it in int8 inside a fused inference graph;
//  - "__min_calib_range__" / "__max_calib_range__" on any node (a variable
//    too): the calibrated range of its first output. The int8 layers'
//    inputs need one; their outputs stay int8 when they have one.
// The weights stay float32 in the checkpoint: they are quantized per output
// channel when the fused graph prepares them, as MXNet's oneDNN backend does.
#pragma once

#include <optional>
#include <string>

#include "graph/symbol.h"
#include "op/inference_layer.h"

namespace mx::graph {

inline constexpr const char* kQuantizeAttr = "__quantize__";
inline constexpr const char* kMinCalibAttr = "__min_calib_range__";
inline constexpr const char* kMaxCalibAttr = "__max_calib_range__";

// The calibrated range of node's first output; nullopt when it has none.
// InputError for a malformed or inverted range, naming the node.
std::optional<op::ValueRange> calibrated_range(const Node& node);
void set_calibrated_range(Node& node, const op::ValueRange& range);

// Whether the node is marked to run in int8. InputError for a mark other
// than "int8", or on an operator that has no int8 kernel.
bool marked_int8(const Node& node);
// Operators that can be marked (Convolution, FullyConnected).
bool can_run_int8(const std::string& op_name);

// Checks every mark of `symbol` (from file `source`): each int8 layer's data
// input has a calibrated range. InputError naming the file and the layer.
// Returns the number of int8 layers.
int check_quantization_marks(const Symbol& symbol, const std::string& source);

}  // namespace mx::graph
