// Feeds arbitrary text to the YAML network builder (the `network:` section
// of an mx-train config: layers, blocks with parameters, ${...}
// expressions, `when` and `repeat`): it must build a symbol or throw
// InputError naming the place, never crash, hang or exhaust memory. Shapes
// are then inferred as mx-train does before it allocates anything.
#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "train/network_yaml.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception&) {
    return 0;  // not YAML: the config loader reports it (fuzz_config)
  }
  try {
    const YAML::Node network = root.IsMap() && root["network"] ? root["network"] : root;
    auto symbol = mx::train::build_network(network, "fuzz.yaml");
    symbol.infer_shape({{"data", mx::Shape{2, 3, 16, 16}}});
  } catch (const mx::InputError&) {
  }
  return 0;
}
