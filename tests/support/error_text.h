// The message of the error a piece of code throws: tests compare exact
// messages, so a changed text or a missing error shows in the check itself.
#pragma once

#include <functional>
#include <string>

#include "base/error.h"

namespace mx::test {

// What `f` throws as an E (InputError unless named), or "(no error)".
template <typename E = InputError>
std::string error_text(const std::function<void()>& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace mx::test
