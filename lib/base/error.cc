#include "base/error.h"

namespace mx::detail {

void throw_check_failure(const char* condition, const char* file, int line,
                         const std::string& message) {
  std::string what = concat("internal check failed: ", condition, " (", file, ":", line, ")");
  if (!message.empty()) what += ": " + message;
  throw Error(what);
}

}  // namespace mx::detail
