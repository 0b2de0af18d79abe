// The inference fusion pass: in a graph bound for CPU inference, each run of
// consecutive layers that a fused oneDNN graph can run (convolutions,
// BatchNorm, activations, pooling and additions; op/fused_inference_op.h)
// becomes one node, so that their tensors stay in oneDNN's blocked layouts
// between the layers and BatchNorm, activations and residual additions fold
// into the convolutions. Runs without a convolution are left alone, unless
// they hold a FullyConnected layer marked int8 (graph/quantize_marks.h).
//
// The rewritten graph shares the original's variables (same names, same
// argument and auxiliary-state lists); the original graph is not changed.
#pragma once

#include <vector>

#include "base/dtype.h"
#include "base/shape.h"
#include "graph/indexed_graph.h"

namespace mx::graph {

struct InferenceFusion {
  std::vector<NodeEntry> heads;  // of the rewritten graph
  int fused_nodes = 0;           // nodes made
  int fused_layers = 0;          // original nodes they replace
};

// `shapes` and `dtypes`: per entry of `g` (infer_bound_entries). `bfloat16`:
// the fused graphs compute in bfloat16 (op::FusedGraphDesc::bfloat16).
InferenceFusion fuse_for_inference(const IndexedGraph& g, const std::vector<Shape>& shapes,
                                   const std::vector<DType>& dtypes, bool bfloat16 = false);

}  // namespace mx::graph
