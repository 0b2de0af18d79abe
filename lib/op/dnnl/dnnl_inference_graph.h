// A fused inference graph (op/inference_layer.h) compiled into a sequence
// of oneDNN primitives that keeps its tensors in oneDNN's blocked layouts
// from its inputs to its outputs. Run one at a time per layer, mx's CPU
// kernels reorder every activation between plain NCHW and the blocked
// layout on both sides of every convolution; here the data is reordered
// once on the way in and once on the way out. On the way, it also
//  - folds a BatchNorm that follows a convolution into the convolution's
//    weights and bias (recomputed when any of them changes),
//  - runs the activation and the addition (a residual connection) that
//    follow a convolution as its post-ops,
//  - fuses a ReLU into the BatchNorm before it,
//  - plans the intermediate tensors' memory by liveness, with element-wise
//    layers and residual additions written in place,
//  - computes in bfloat16 when asked (FusedGraphDesc::bfloat16): activations
//    and reordered weights in bfloat16, sums, bias and BatchNorm statistics
//    in float32; the graph's inputs and outputs stay float32,
//  - runs FullyConnected layers of 2-D data as inner products (with the
//    activation after them as a post-op),
//  - computes the convolutions and FullyConnected layers marked int8 (FusedLayer::int8) in int8: the
//    input quantized by its calibrated range (or taken as the int8 that the
//    layer before made), weights per output channel, int32 sums scaled once
//    into an int8 output when the next int8 layer reads it (no float round
//    trip between them), else into float32.
// Weights are reordered (and folded) once per content of the arrays they
// come from, as ContentStamp names it; arrays without a stamp are reordered
// at every call.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "op/inference_layer.h"
#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op::dnnl_impl {

class DnnlInferenceGraph {
 public:
  // Builds the primitives for the shapes of `desc`; throws Error when
  // oneDNN cannot (the caller then leaves the layers unfused).
  explicit DnnlInferenceGraph(const FusedGraphDesc& desc);
  ~DnnlInferenceGraph();
  DnnlInferenceGraph(const DnnlInferenceGraph&) = delete;
  DnnlInferenceGraph& operator=(const DnnlInferenceGraph&) = delete;

  // inputs: one per desc.inputs; outputs and req: one per desc.outputs. The
  // intermediate tensors and oneDNN's scratchpad come from the TempSpace.
  void run(const std::vector<TensorRef>& inputs, const std::vector<TensorRef>& outputs,
           const std::vector<OpReq>& req, const OpResources& resources);

  using Stats = FusedGraphStats;
  const Stats& stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mx::op::dnnl_impl
