// The operator a graph pass puts in place of a run of layers it fuses for
// CPU inference (graph/fuse_inference.h): one node that runs a
// FusedGraphDesc as a compiled oneDNN graph (dnnl/dnnl_inference_graph.h).
// It is made here, not registered: it has no MXNet name, no backward pass
// and no GPU kernel, and it never appears in a saved symbol.
#pragma once

#include <optional>
#include <string>

#include "op/inference_layer.h"
#include "op/invoke.h"

namespace mx::op {

// True when a fused graph can run `layer` the way its operator computes it
// (oneDNN built in and enabled, and the case one oneDNN computes as MXNet).
bool can_fuse_for_inference(const InferenceLayer& layer);

// What a fused node made of its layers.
struct FusedInferenceSummary : FusedGraphStats {
  int layers = 0;
  bool bfloat16 = false;
};

// The operator for `desc`, named `owner` in messages; nullopt when oneDNN
// cannot build it (the layers then stay as they are).
std::optional<OpInstance> fused_inference_op(const FusedGraphDesc& desc, const std::string& owner);

// The summary of a node made by fused_inference_op; nullopt for any other.
std::optional<FusedInferenceSummary> fused_inference_summary(const OpInstance& op);

}  // namespace mx::op
