// The C API's error convention: every entry point returns 0, or -1 with a
// message kept per thread for MXGetLastError. No exception crosses the C
// boundary.
#pragma once

#include <exception>
#include <new>
#include <string>

namespace mx::capi {

// Stores `message` as this thread's last error.
void set_last_error(std::string message);

// Runs `body`; returns 0, or -1 with what it threw stored as the last
// error, after the name of the C function that failed.
template <typename Body>
int guarded(const char* function, Body&& body) noexcept {
  try {
    try {
      body();
      return 0;
    } catch (const std::bad_alloc&) {
      set_last_error(std::string(function) + ": out of memory (std::bad_alloc)");
    } catch (const std::exception& e) {
      set_last_error(std::string(function) + ": " + e.what());
    } catch (...) {
      set_last_error(std::string(function) + ": unknown error (not a std::exception)");
    }
  } catch (...) {  // building the message ran out of memory
    set_last_error({});
  }
  return -1;
}

}  // namespace mx::capi
