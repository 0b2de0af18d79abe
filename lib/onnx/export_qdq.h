// int8 layers in an ONNX export (internal to lib/onnx): the convolutions a
// checkpoint marks int8 (graph/quantize_marks.h) become QDQ, the format ONNX
// Runtime's quantizer writes and fuses into QLinearConv, with the scales mx's
// fused inference graphs use:
//  - the data a convolution reads goes through QuantizeLinear and
//    DequantizeLinear at the scale of its calibrated range (uint8 with scale
//    max/255 when the range has no negative values, else int8 with scale
//    max(|min|, |max|)/127; zero point 0);
//  - the weights become an int8 initializer, quantized per output channel
//    (largest magnitude to 127, rounded to nearest even), read through a
//    DequantizeLinear with axis 0; the bias becomes int32 at the scale
//    input scale * weight scale, as ONNX Runtime's quantizer writes it;
//  - where mx holds a value between int8 layers in int8 (the output of an
//    int8 convolution's fused primitive, after its BatchNorm, activation and
//    addition, when an int8 convolution reads it, directly or through
//    pooling), that value goes through QuantizeLinear and DequantizeLinear
//    at its own range's scale, as do the pooling outputs on the way.
#pragma once

#include <memory>
#include <vector>

#include "graph/node.h"
#include "onnx/export_ops.h"

namespace mx::onnx {

// Rewrites the nodes the export rules wrote into ctx.graph. `nodes`: the
// symbol's nodes in topological order; `heads`: its outputs. Returns the
// number of int8 convolutions; with none, the graph is left as it is. An
// int8 layer needs opset 13 or later (InputError otherwise).
int export_int8_layers(ExportContext& ctx, const std::vector<std::shared_ptr<graph::Node>>& nodes,
                       const std::vector<graph::NodeEntry>& heads);

}  // namespace mx::onnx
