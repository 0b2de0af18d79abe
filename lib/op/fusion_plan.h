// Which layers of a fused inference graph (op/inference_layer.h) run as one
// oneDNN primitive, and when. A convolution takes the BatchNorm that follows
// it (folded into its weights), then an activation and a residual addition
// (post-ops), each only when it is the sole reader of the value before it
// and that value is not handed back; a BatchNorm takes a ReLU after it, a
// FullyConnected an activation. A
// fused primitive runs in the turn of its last layer, when the addend of its
// addition is ready. Plain logic on the layer graph, independent of oneDNN,
// so it is tested on its own (tests/graph/test_fusion_plan.cc).
#pragma once

#include <vector>

#include "op/inference_layer.h"

namespace mx::op {

struct LayerFusion {
  int fold_batch_norm = -1;   // a BatchNorm layer folded into this convolution
  std::vector<int> post_ops;  // activation and addition layers taken, in order
  int addend = -1;            // the value the addition post-op adds
  int last = -1;              // the primitive runs in this layer's turn
  bool absorbed = false;      // this layer runs inside another layer's primitive
};

class FusionPlan {
 public:
  explicit FusionPlan(const FusedGraphDesc& desc);

  const LayerFusion& of(int layer) const { return fusions_[static_cast<size_t>(layer)]; }
  // The turn in which layer runs (its own, or its fused primitive's last).
  int turn_of(int layer) const {
    return of(layer).absorbed ? turn_[static_cast<size_t>(layer)] : of(layer).last;
  }
  // True when no layer after `turn` reads value v, so the primitive of that
  // turn may write over it (graph inputs belong to the caller: never).
  bool dies_at(int v, int turn) const;

 private:
  // The one layer reading value v when v is read by one layer only and is
  // not handed back; -1 otherwise.
  int sole_consumer(int v) const;
  void plan_convolution(int l, LayerFusion& f);

  const FusedGraphDesc& desc_;
  std::vector<std::vector<int>> consumers_;  // per value
  std::vector<bool> is_output_;
  std::vector<LayerFusion> fusions_;
  std::vector<int> turn_;  // per absorbed layer: its primitive's turn
};

}  // namespace mx::op
