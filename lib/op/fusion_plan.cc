#include "op/fusion_plan.h"

namespace mx::op {

FusionPlan::FusionPlan(const FusedGraphDesc& desc) : desc_(desc) {
  const auto values = static_cast<size_t>(desc.num_values());
  consumers_.resize(values);
  is_output_.assign(values, false);
  for (size_t l = 0; l < desc.layers.size(); ++l)
    for (int v : desc.layers[l].inputs)
      consumers_[static_cast<size_t>(v)].push_back(static_cast<int>(l));
  for (int v : desc.outputs) is_output_[static_cast<size_t>(v)] = true;

  const int count = static_cast<int>(desc.layers.size());
  fusions_.assign(static_cast<size_t>(count), {});
  turn_.assign(static_cast<size_t>(count), -1);
  for (int l = 0; l < count; ++l) {
    LayerFusion& f = fusions_[static_cast<size_t>(l)];
    if (f.absorbed) continue;
    f.last = l;
    const InferenceLayer& layer = desc.layers[static_cast<size_t>(l)].layer;
    if (layer.kind == LayerKind::kConvolution) {
      plan_convolution(l, f);
    } else if (layer.kind == LayerKind::kFullyConnected) {
      // An inner product takes the activation after it.
      const int next = sole_consumer(desc.value_of_layer(static_cast<size_t>(l)));
      if (next >= 0 &&
          desc.layers[static_cast<size_t>(next)].layer.kind == LayerKind::kActivation) {
        f.post_ops.push_back(next);
        f.last = next;
      }
    } else if (layer.kind == LayerKind::kBatchNorm) {
      const int next = sole_consumer(desc.value_of_layer(static_cast<size_t>(l)));
      if (next >= 0) {
        const InferenceLayer& n = desc.layers[static_cast<size_t>(next)].layer;
        if (n.kind == LayerKind::kActivation && n.activation == ActType::kRelu) {
          f.post_ops.push_back(next);
          f.last = next;
        }
      }
    }
    std::vector<int> members = f.post_ops;
    if (f.fold_batch_norm >= 0) members.push_back(f.fold_batch_norm);
    for (int m : members) {
      fusions_[static_cast<size_t>(m)].absorbed = true;
      turn_[static_cast<size_t>(m)] = f.last;
    }
  }
}

void FusionPlan::plan_convolution(int l, LayerFusion& f) {
  bool has_sum = false, has_eltwise = false;
  int current = desc_.value_of_layer(static_cast<size_t>(l));
  for (int next = sole_consumer(current); next >= 0; next = sole_consumer(current)) {
    // An addition fed by two convolutions goes to the first one in order.
    if (fusions_[static_cast<size_t>(next)].absorbed) break;
    const FusedLayer& n = desc_.layers[static_cast<size_t>(next)];
    if (n.layer.kind == LayerKind::kBatchNorm && n.inputs[0] == current && f.fold_batch_norm < 0 &&
        f.post_ops.empty()) {
      f.fold_batch_norm = next;
    } else if (n.layer.kind == LayerKind::kActivation && !has_eltwise) {
      f.post_ops.push_back(next);
      has_eltwise = true;
    } else if (n.layer.kind == LayerKind::kAdd && !has_sum && !has_eltwise &&
               n.inputs[0] != n.inputs[1]) {
      // (oneDNN's sum post-op comes before the activation's.)
      f.post_ops.push_back(next);
      f.addend = n.inputs[0] == current ? n.inputs[1] : n.inputs[0];
      has_sum = true;
    } else {
      break;
    }
    f.last = next;
    current = desc_.value_of_layer(static_cast<size_t>(next));
  }
}

int FusionPlan::sole_consumer(int v) const {
  const auto& c = consumers_[static_cast<size_t>(v)];
  if (is_output_[static_cast<size_t>(v)] || c.size() != 1) return -1;
  return c[0];
}

bool FusionPlan::dies_at(int v, int turn) const {
  if (v < static_cast<int>(desc_.inputs.size())) return false;
  for (int c : consumers_[static_cast<size_t>(v)])
    if (turn_of(c) > turn) return false;
  return true;
}

}  // namespace mx::op
