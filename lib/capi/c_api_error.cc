#include "capi/c_api_error.h"

#include <utility>

#include "mx/c_predict_api.h"

namespace mx::capi {
namespace {

// One per thread, so concurrent callers each read their own failure.
std::string& last_error() {
  thread_local std::string message;
  return message;
}

}  // namespace

void set_last_error(std::string message) { last_error() = std::move(message); }

}  // namespace mx::capi

const char* MXGetLastError(void) { return mx::capi::last_error().c_str(); }
