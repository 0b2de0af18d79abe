// The RecordIO library stands alone with its own error types; here they
// become mx errors: a malformed file is bad input (exit code 2), a failed
// write a runtime failure (exit code 1). Messages pass through unchanged.
#pragma once

#include <utility>

#include "base/error.h"
#include "recordio/format_error.h"

namespace mx {

inline InputError to_input_error(const recordio::FormatError& e) { return InputError(e.what()); }

template <typename Fn>
decltype(auto) with_recordio_errors(Fn&& fn) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const recordio::FormatError& e) {
    throw InputError(e.what());
  } catch (const recordio::Error& e) {
    throw Error(e.what());
  }
}

}  // namespace mx
