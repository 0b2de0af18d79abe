#include "train/attention_layer.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/error.h"
#include "base/param_value.h"
#include "base/strings.h"

namespace mx::train {
namespace {

// Added to the score of a key after its query: exp() of it is 0 in float32,
// and it stays finite in float16 (as GPT-2's -10000).
constexpr const char* kMaskedScore = "-10000";

const std::vector<std::string> kKeys = {"units",  "heads",   "causal",  "dropout",
                                        "layout", "lr_mult", "wd_mult", "mirror"};

struct AttentionSettings {
  int64_t units = 0;
  int64_t heads = 0;
  bool causal = false;
  double dropout = 0;
  bool batch_first = false;                     // layout NTC
  std::map<std::string, std::string> training;  // __lr_mult__ etc. for the projections
};

int64_t positive_int(const std::map<std::string, std::string>& attrs, const std::string& key,
                     const std::string& where) {
  auto it = attrs.find(key);
  if (it == attrs.end())
    throw InputError(where + ": SelfAttention needs '" + key + "' (" +
                     (key == "units"
                          ? "the width of its queries, keys, values and output, e.g. units: 128"
                          : "the number of attention heads, e.g. heads: 4") +
                     ")");
  int64_t v = 0;
  try {
    v = param_value::parse_int(it->second);
  } catch (const InputError& e) {
    throw InputError(where + ": " + key + ": " + e.what());
  }
  if (v < 1) throw InputError(str(where, ": ", key, " must be at least 1, not ", v));
  return v;
}

AttentionSettings read_settings(const std::map<std::string, std::string>& attrs,
                                const std::string& where) {
  for (const auto& [key, value] : attrs) {
    const std::string plain = key.size() > 4 && key.rfind("__", 0) == 0
                                  ? key.substr(2, key.size() - 4)  // __lr_mult__ -> lr_mult
                                  : key;
    if (std::find(kKeys.begin(), kKeys.end(), plain) == kKeys.end())
      throw InputError(where + ": SelfAttention has no key '" + key + "'" +
                       did_you_mean(key, kKeys) + "; its keys: " + join(kKeys, ", "));
  }
  AttentionSettings s;
  s.units = positive_int(attrs, "units", where);
  s.heads = positive_int(attrs, "heads", where);
  // The projection's width, 3 * units, is an int parameter of FullyConnected.
  constexpr int64_t kMaxUnits = std::numeric_limits<int32_t>::max() / 3;
  if (s.units > kMaxUnits)
    throw InputError(str(where, ": units must be at most ", kMaxUnits, ", not ", s.units));
  if (s.units % s.heads != 0)
    throw InputError(str(where, ": heads (", s.heads, ") must divide units (", s.units,
                         "): each head takes units / heads of the width"));
  try {
    if (auto it = attrs.find("causal"); it != attrs.end())
      s.causal = param_value::parse_bool(it->second);
  } catch (const InputError& e) {
    throw InputError(where + ": causal: " + e.what());
  }
  if (auto it = attrs.find("dropout"); it != attrs.end()) {
    try {
      s.dropout = param_value::parse_double(it->second);
    } catch (const InputError& e) {
      throw InputError(where + ": dropout: " + e.what());
    }
    if (!(s.dropout >= 0 && s.dropout < 1))
      throw InputError(where + ": dropout must be in [0, 1), not " + trim(it->second));
  }
  if (auto it = attrs.find("layout"); it != attrs.end()) {
    const std::string layout = trim(it->second);
    if (layout != "TNC" && layout != "NTC")
      throw InputError(where + ": layout must be TNC (steps first, the attention operators') " +
                       "or NTC (batch first), not '" + layout + "'");
    s.batch_first = layout == "NTC";
  }
  for (const auto& [key, value] : attrs)
    if (key.rfind("__", 0) == 0) s.training[key] = value;
  return s;
}

graph::Symbol op(const std::string& name, const std::string& kind,
                 std::map<std::string, std::string> attrs, const std::vector<graph::Symbol>& in) {
  return graph::Symbol::create(kind, name, attrs, in);
}

// A (steps, steps) bias that is kMaskedScore where key j comes after query
// i and 0 elsewhere, for the scores (N * heads, steps, steps); the steps
// are counted from `qkv` (steps, N, 3 * units), whose values are not read.
graph::Symbol causal_bias(const std::string& name, const graph::Symbol& qkv) {
  const graph::Symbol steps = op(name + "_steps", "_contrib_arange_like", {{"axis", "0"}}, {qkv});
  const graph::Symbol queries = op(name + "_queries", "Reshape", {{"shape", "(-1, 1)"}}, {steps});
  const graph::Symbol keys = op(name + "_keys", "Reshape", {{"shape", "(1, -1)"}}, {steps});
  // key - query, then clipped to [0, 1]: 1 for a later key, 0 otherwise
  // (positions are whole numbers; MXNet 1.9.1 has no comparison that mx
  // needs here).
  const graph::Symbol offset = op(name + "_offset", "broadcast_sub", {}, {keys, queries});
  const graph::Symbol future =
      op(name + "_future", "clip", {{"a_min", "0"}, {"a_max", "1"}}, {offset});
  return op(name + "_bias", "_mul_scalar", {{"scalar", kMaskedScore}}, {future});
}

}  // namespace

graph::Symbol build_self_attention_layer(const std::string& name,
                                         const std::map<std::string, std::string>& attrs,
                                         const graph::Symbol& data, const std::string& where) {
  const AttentionSettings s = read_settings(attrs, where);
  const std::string heads = std::to_string(s.heads);
  auto projection = [&](int64_t width) {
    std::map<std::string, std::string> a = s.training;
    a["num_hidden"] = std::to_string(width);
    a["flatten"] = "False";
    return a;
  };
  const graph::Symbol x =
      s.batch_first ? op(name + "_tnc", "transpose", {{"axes", "(1, 0, 2)"}}, {data}) : data;
  const graph::Symbol qkv = op(name + "_qkv", "FullyConnected", projection(3 * s.units), {x});
  graph::Symbol scores =
      op(name + "_scores", "_contrib_interleaved_matmul_selfatt_qk", {{"heads", heads}}, {qkv});
  if (s.causal)
    scores =
        op(name + "_causal", "broadcast_add", {}, {scores, causal_bias(name + "_causal", qkv)});
  graph::Symbol attention = op(name + "_attention", "softmax", {{"axis", "-1"}}, {scores});
  if (s.dropout > 0)
    attention = op(name + "_attention_dropout", "Dropout",
                   {{"p", param_value::print_double(s.dropout)}}, {attention});
  const graph::Symbol context = op(name + "_context", "_contrib_interleaved_matmul_selfatt_valatt",
                                   {{"heads", heads}}, {qkv, attention});
  const graph::Symbol out = op(name + "_proj", "FullyConnected", projection(s.units), {context});
  return s.batch_first ? op(name + "_ntc", "transpose", {{"axes", "(1, 0, 2)"}}, {out}) : out;
}

}  // namespace mx::train
