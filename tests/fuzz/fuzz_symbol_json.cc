// Feeds arbitrary text to the MXNet symbol JSON loader (as mx-predict and
// the graph tools read a -symbol.json): it must return a symbol or throw
// InputError, never crash or hang. A symbol that loads must survive what
// its users do next: list its parts, write it back, infer shapes and types.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "graph/symbol.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    auto symbol = mx::graph::Symbol::from_json(text, "fuzz-symbol.json");
    symbol.list_arguments();
    symbol.list_outputs();
    symbol.list_auxiliary_states();
    symbol.get_internals().list_outputs();
    // What is written must read back.
    mx::graph::Symbol::from_json(symbol.to_json(), "round trip");
    mx::graph::ShapeMap shapes;
    for (const auto& name : symbol.list_arguments()) {
      shapes[name] = mx::Shape{2, 3, 8, 8};
      break;  // the first argument is the data
    }
    symbol.infer_shape(shapes);
    symbol.infer_type({});
  } catch (const mx::InputError&) {
  }
  return 0;
}
