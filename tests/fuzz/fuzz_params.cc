// Feeds arbitrary bytes to the .params reader: it must return or throw
// InputError, never crash, hang or allocate more than the input justifies.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>

#include "base/error.h"
#include "ndarray/params_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  try {
    mx::NamedArrays list = mx::read_params(in, size, "fuzz input");
    for (const auto& a : list.arrays) a.wait_to_read();
  } catch (const mx::InputError&) {
  }
  return 0;
}
