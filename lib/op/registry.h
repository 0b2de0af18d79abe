// The operator registry: every operator of mx, by MXNet name and alias.
// Families register themselves from one place (registry.cc), so there is no
// static-initialization magic and the list of families is readable.
#pragma once

#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "op/op_def.h"

namespace mx::op {

class OpRegistry {
 public:
  static const OpRegistry& get();

  // Throws InputError naming the closest registered name when absent.
  const OpDef& find(const std::string& name) const;
  const OpDef* lookup(const std::string& name) const;
  // Every operator, sorted by name.
  std::vector<const OpDef*> list() const;

  // Registration (only while the registry is built).
  template <typename P>
  OpBuilder<P> add(const std::string& name) {
    return OpBuilder<P>(add_def(name));
  }
  // Makes aliases findable; called once after all families registered.
  void index_aliases();

 private:
  OpRegistry() = default;
  OpDef& add_def(const std::string& name);

  std::vector<std::unique_ptr<OpDef>> defs_;  // stable addresses
  std::unordered_map<std::string, const OpDef*> by_name_;
};

// One function per family file.
void register_elemwise_ops(OpRegistry& r);
void register_fully_connected(OpRegistry& r);
void register_activation_ops(OpRegistry& r);
void register_matrix_ops(OpRegistry& r);
void register_concat_ops(OpRegistry& r);
void register_broadcast_ops(OpRegistry& r);
void register_reduce_ops(OpRegistry& r);
void register_dot_ops(OpRegistry& r);
void register_indexing_ops(OpRegistry& r);
void register_cast_op(OpRegistry& r);
void register_amp_cast_ops(OpRegistry& r);
void register_softmax_ops(OpRegistry& r);
void register_output_ops(OpRegistry& r);
void register_convolution_ops(OpRegistry& r);
void register_pooling_ops(OpRegistry& r);
void register_batch_norm_ops(OpRegistry& r);
void register_lrn_ops(OpRegistry& r);
void register_dropout_ops(OpRegistry& r);
void register_leaky_relu_ops(OpRegistry& r);
void register_embedding_ops(OpRegistry& r);
void register_rnn_ops(OpRegistry& r);
void register_layer_norm_ops(OpRegistry& r);
void register_attention_ops(OpRegistry& r);
void register_sequence_ops(OpRegistry& r);
void register_shape_ops(OpRegistry& r);
void register_slice_ops(OpRegistry& r);
void register_repeat_ops(OpRegistry& r);
void register_init_ops(OpRegistry& r);
void register_ordering_ops(OpRegistry& r);
void register_quantize_linear_ops(OpRegistry& r);
void register_all_finite_ops(OpRegistry& r);
// scripts/new-op.sh adds new operators above this line.

}  // namespace mx::op
