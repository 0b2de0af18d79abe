// Feeds arbitrary bytes to the ONNX importer (protobuf parse, onnx::checker,
// tensor conversion, operator mapping): it must return or throw InputError,
// never crash, hang or allocate more than the input justifies.
#include <cstddef>
#include <cstdint>
#include <string>

#include "base/error.h"
#include "onnx/import.h"
#include "onnx/model_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    auto model =
        mx::onnx::parse_model(std::string(reinterpret_cast<const char*>(data), size), "fuzz input");
    mx::onnx::ImportedModel imported = mx::onnx::import_model(model, "fuzz input");
    (void)imported.symbol.list_arguments();
  } catch (const mx::InputError&) {
  }
  return 0;
}
