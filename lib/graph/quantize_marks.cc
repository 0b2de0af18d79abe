#include "graph/quantize_marks.h"

#include <cmath>
#include <cstdio>

#include "base/error.h"

namespace mx::graph {
namespace {

std::optional<float> read_bound(const Node& node, const char* key) {
  auto it = node.attrs.find(key);
  if (it == node.attrs.end()) return std::nullopt;
  const std::string& text = it->second;
  size_t used = 0;
  float value = 0;
  try {
    value = std::stof(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !std::isfinite(value))
    throw InputError("layer '" + node.name + "': " + key + " is '" + text +
                     "', not a finite number");
  return value;
}

std::string format_bound(float v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", static_cast<double>(v));
  return text;
}

}  // namespace

std::optional<op::ValueRange> calibrated_range(const Node& node) {
  const auto low = read_bound(node, kMinCalibAttr);
  const auto high = read_bound(node, kMaxCalibAttr);
  if (!low && !high) return std::nullopt;
  if (!low || !high)
    throw InputError("layer '" + node.name + "' has only one of " + kMinCalibAttr + " and " +
                     kMaxCalibAttr);
  if (*low > *high)
    throw InputError("layer '" + node.name + "': calibrated range [" + format_bound(*low) + ", " +
                     format_bound(*high) + "] is inverted");
  return op::ValueRange{*low, *high};
}

void set_calibrated_range(Node& node, const op::ValueRange& range) {
  node.attrs[kMinCalibAttr] = format_bound(range.min);
  node.attrs[kMaxCalibAttr] = format_bound(range.max);
}

bool can_run_int8(const std::string& op_name) {
  return op_name == "Convolution" || op_name == "FullyConnected";
}

bool marked_int8(const Node& node) {
  auto it = node.attrs.find(kQuantizeAttr);
  if (it == node.attrs.end()) return false;
  if (it->second != "int8")
    throw InputError("layer '" + node.name + "': " + kQuantizeAttr + " is '" + it->second +
                     "'; the only precision mx quantizes to is int8");
  const std::string op_name = node.is_variable() ? "a variable" : node.op->def().name;
  if (!can_run_int8(op_name))
    throw InputError("layer '" + node.name + "' (" + op_name +
                     ") is marked int8, but only Convolution and FullyConnected run in int8");
  return true;
}

int check_quantization_marks(const Symbol& symbol, const std::string& source) {
  int count = 0;
  try {
    for (const auto& node : topo_order(symbol.outputs())) {
      calibrated_range(*node);
      if (!marked_int8(*node)) continue;
      ++count;
      const NodeEntry& data = node->inputs.at(0);
      if (data.index != 0 || !calibrated_range(*data.node))
        throw InputError("layer '" + node->name + "' is marked int8 but its input '" +
                         data.node->output_name(data.index) +
                         "' has no calibrated range (quantize the float32 model with "
                         "mx-quantize)");
    }
  } catch (const InputError& e) {
    throw InputError(source + ": " + e.what());
  }
  return count;
}

}  // namespace mx::graph
