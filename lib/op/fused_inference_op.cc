#include "op/fused_inference_op.h"

#include <memory>

#include "base/error.h"
#include "base/logging.h"
#include "op/dnnl/dnnl_switch.h"
#if MX_USE_DNNL
#include "op/dnnl/dnnl_descs.h"
#include "op/dnnl/dnnl_inference_graph.h"
#endif

namespace mx::op {
namespace {

#if MX_USE_DNNL
struct FusedParams {
  FusedGraphDesc desc;
  std::shared_ptr<dnnl_impl::DnnlInferenceGraph> graph;
};

const FusedParams& fused(const ParamsPtr& p) { return *static_cast<const FusedParams*>(p.get()); }

std::vector<std::string> numbered(const char* prefix, size_t begin, size_t end) {
  std::vector<std::string> names;
  for (size_t i = begin; i < end; ++i) names.push_back(prefix + std::to_string(i));
  return names;
}

const OpDef& fused_def() {
  static const OpDef def = [] {
    OpDef d;
    d.name = "_fused_inference";
    d.description = "Layers fused for CPU inference (made at bind time, never saved).";
    d.parse = [](const AttrMap&, const std::string& owner) -> ParamsPtr {
      throw InputError(owner + ": _fused_inference is made by the executor, not read from a file");
    };
    d.print = [](const ParamsPtr&) { return AttrMap{}; };
    d.input_names = [](const ParamsPtr& p) {
      const FusedGraphDesc& g = fused(p).desc;
      return numbered("data", 0, g.inputs.size() - g.num_aux);
    };
    d.aux_names = [](const ParamsPtr& p) {
      const FusedGraphDesc& g = fused(p).desc;
      return numbered("aux", g.inputs.size() - g.num_aux, g.inputs.size());
    };
    d.output_names = [](const ParamsPtr& p) {
      return numbered("output", 0, fused(p).desc.outputs.size());
    };
    d.num_visible_outputs = [](const ParamsPtr& p) {
      return static_cast<int>(fused(p).desc.outputs.size());
    };
    d.infer_shape = [](const ParamsPtr& p, ShapeVector& in, ShapeVector& aux, ShapeVector& out) {
      const FusedParams& f = fused(p);
      const size_t regular = f.desc.inputs.size() - f.desc.num_aux;
      for (size_t i = 0; i < in.size(); ++i) in[i] = f.desc.inputs[i];
      for (size_t i = 0; i < aux.size(); ++i) aux[i] = f.desc.inputs[regular + i];
      out = f.desc.output_shapes;
    };
    d.infer_type = [](const ParamsPtr&, DTypeVector& in, DTypeVector& aux, DTypeVector& out) {
      for (auto* types : {&in, &aux, &out})
        for (auto& t : *types) t = DType::kFloat32;
    };
    d.resources = {ResourceKind::kTempSpace};
    d.forward[static_cast<int>(DeviceKind::kCPU)] = [](const ParamsPtr& p, const ForwardCall& c) {
      if (c.is_train)
        throw Error(
            "this executor fused its layers for inference; forward(is_train = true) needs one "
            "bound for training");
      std::vector<TensorRef> inputs = c.inputs;
      inputs.insert(inputs.end(), c.aux.begin(), c.aux.end());
      fused(p).graph->run(inputs, c.outputs, c.req, c.resources);
    };
    return d;
  }();
  return def;
}
#endif

}  // namespace

bool can_fuse_for_inference(const InferenceLayer& layer) {
#if MX_USE_DNNL
  if (!dnnl_enabled()) return false;
  switch (layer.kind) {
    case LayerKind::kConvolution: return dnnl_impl::conv_supported(layer.conv);
    case LayerKind::kPooling: return dnnl_impl::pool_supported(layer.pool);
    case LayerKind::kBatchNorm: return layer.bn_eps > 0;
    case LayerKind::kFullyConnected: return layer.fc.inputs > 0 && layer.fc.outputs > 0;
    default: return true;
  }
#else
  (void)layer;
  return false;
#endif
}

std::optional<OpInstance> fused_inference_op(const FusedGraphDesc& desc, const std::string& owner) {
#if MX_USE_DNNL
  auto params = std::make_shared<FusedParams>();
  params->desc = desc;
  try {
    params->graph = std::make_shared<dnnl_impl::DnnlInferenceGraph>(desc);
  } catch (const Error& e) {
    MX_LOG(kWarning) << owner << ": left unfused: " << e.what();
    return std::nullopt;
  }
  return OpInstance(fused_def(), params, owner);
#else
  (void)desc;
  (void)owner;
  return std::nullopt;
#endif
}

std::optional<FusedInferenceSummary> fused_inference_summary(const OpInstance& op) {
#if MX_USE_DNNL
  if (&op.def() != &fused_def()) return std::nullopt;
  const FusedParams& f = fused(op.params());
  FusedInferenceSummary summary;
  static_cast<FusedGraphStats&>(summary) = f.graph->stats();
  summary.layers = static_cast<int>(f.desc.layers.size());
  summary.bfloat16 = f.desc.bfloat16;
  return summary;
#else
  (void)op;
  return std::nullopt;
#endif
}

}  // namespace mx::op
