#include "op/registry.h"

#include <algorithm>

#include "base/error.h"
#include "base/strings.h"

namespace mx::op {

const OpRegistry& OpRegistry::get() {
  // Never destroyed: kernels of operations still queued when the program
  // exits are looked up here while the engine drains (in its destructor).
  static const OpRegistry& registry = *[] {
    std::unique_ptr<OpRegistry> made(new OpRegistry);
    OpRegistry& r = *made;
    // Every operator family, in one place.
    register_elemwise_ops(r);
    register_fully_connected(r);
    register_activation_ops(r);
    register_matrix_ops(r);
    register_concat_ops(r);
    register_broadcast_ops(r);
    register_reduce_ops(r);
    register_dot_ops(r);
    register_indexing_ops(r);
    register_cast_op(r);
    register_amp_cast_ops(r);
    register_softmax_ops(r);
    register_output_ops(r);
    register_convolution_ops(r);
    register_pooling_ops(r);
    register_batch_norm_ops(r);
    register_lrn_ops(r);
    register_dropout_ops(r);
    register_leaky_relu_ops(r);
    register_embedding_ops(r);
    register_rnn_ops(r);
    register_layer_norm_ops(r);
    register_attention_ops(r);
    register_sequence_ops(r);
    register_shape_ops(r);
    register_slice_ops(r);
    register_repeat_ops(r);
    register_init_ops(r);
    register_ordering_ops(r);
    register_quantize_linear_ops(r);
    register_all_finite_ops(r);
    // scripts/new-op.sh adds new operators above this line.
    r.index_aliases();
    return made.release();
  }();
  return registry;
}

OpDef& OpRegistry::add_def(const std::string& name) {
  MX_CHECK(by_name_.find(name) == by_name_.end(), "operator ", name, " registered twice");
  defs_.push_back(std::make_unique<OpDef>());
  OpDef& def = *defs_.back();
  def.name = name;
  by_name_[name] = &def;
  return def;
}

void OpRegistry::index_aliases() {
  for (const auto& def : defs_) {
    MX_CHECK(def->input_names, "operator ", def->name, " declares no inputs");
    MX_CHECK(def->infer_shape, "operator ", def->name, " has no shape inference");
    MX_CHECK(def->forward[0], "operator ", def->name, " has no CPU kernel");
    MX_CHECK(def->amp_class, "operator ", def->name, " declares no AMP class (OpBuilder::amp)");
    for (const auto& alias : def->aliases) {
      MX_CHECK(by_name_.find(alias) == by_name_.end(), "alias ", alias, " registered twice");
      by_name_[alias] = def.get();
    }
  }
}

const OpDef* OpRegistry::lookup(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

const OpDef& OpRegistry::find(const std::string& name) const {
  if (const OpDef* def = lookup(name)) return *def;
  std::vector<std::string> names;
  for (const auto& [n, def] : by_name_) names.push_back(n);
  throw InputError("unknown operator '" + name + "'" + did_you_mean(name, names));
}

std::vector<const OpDef*> OpRegistry::list() const {
  std::vector<const OpDef*> out;
  for (const auto& def : defs_) out.push_back(def.get());
  std::sort(out.begin(), out.end(),
            [](const OpDef* a, const OpDef* b) { return a->name < b->name; });
  return out;
}

}  // namespace mx::op
