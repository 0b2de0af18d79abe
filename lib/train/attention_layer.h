// The network language's self-attention layer, `op: SelfAttention`
// (docs/sequence-models.md): multi-head self-attention written with MXNet
// 1.9.1's own operators, as GluonNLP's exported transformers are, so that
// the graph saves as symbol JSON that MXNet loads:
//   LAYER_qkv      FullyConnected (flatten=False) to 3 * units, each head's
//                  query, key and value side by side (the interleaved layout)
//   LAYER_scores   _contrib_interleaved_matmul_selfatt_qk: Q K^T / sqrt(d)
//   LAYER_causal_* causal: true adds -10000 where a key comes after the query
//                  (a (steps, steps) bias made from _contrib_arange_like, so
//                  any number of steps works; no gradient flows through it)
//   LAYER_attention softmax over the keys (then Dropout when dropout > 0)
//   LAYER_context  _contrib_interleaved_matmul_selfatt_valatt: attention V
//   LAYER_proj     FullyConnected (flatten=False) back to units
// Its keys: units (the width of the queries, keys, values and output;
// required), heads
// (required, dividing units), causal (false), dropout (0, on the attention
// weights), layout (TNC, the operators'; NTC transposes in and out), and the
// training attributes lr_mult, wd_mult and mirror, given to its layers.
#pragma once

#include <map>
#include <string>

#include "graph/symbol.h"

namespace mx::train {

// The name of the layer kind in YAML.
inline constexpr const char* kSelfAttentionLayer = "SelfAttention";

// Builds layer `name` from its YAML attributes on `data`; the result is the
// layer's output in its layout. `where` names the layer in errors
// (InputError for a missing or bad key, naming the allowed ones).
graph::Symbol build_self_attention_layer(const std::string& name,
                                         const std::map<std::string, std::string>& attrs,
                                         const graph::Symbol& data, const std::string& where);

}  // namespace mx::train
