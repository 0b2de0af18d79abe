// Errors of mx. Every message says what went wrong and where (file, byte
// offset, operator, parameter), so a user can act on it without a debugger.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace mx {

// How a program should end when an error reaches main(): bad input from the
// user (arguments, configs, malformed files) is exit code 2, a failure while
// running is exit code 1.
enum class ErrorKind { kRuntime = 1, kInput = 2 };

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message, ErrorKind kind = ErrorKind::kRuntime)
      : std::runtime_error(message), kind_(kind) {}

  ErrorKind kind() const { return kind_; }
  int exit_code() const { return static_cast<int>(kind_); }

 private:
  ErrorKind kind_;
};

// Bad input: a usage error, a bad config or a malformed file. Exit code 2.
class InputError : public Error {
 public:
  explicit InputError(const std::string& message) : Error(message, ErrorKind::kInput) {}
};

// Bad input that has already been shown to the user (rank 0 of a
// distributed job prints a start-up problem once, for every rank): a
// program ends with exit code 2 and prints nothing more.
class ReportedInputError : public InputError {
 public:
  using InputError::InputError;
};

namespace detail {
template <typename... Args>
std::string concat(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}
[[noreturn]] void throw_check_failure(const char* condition, const char* file, int line,
                                      const std::string& message);
}  // namespace detail

// Builds a string from streamable pieces: str("ndim ", n, " > ", max).
template <typename... Args>
std::string str(Args&&... args) {
  return detail::concat(std::forward<Args>(args)...);
}

}  // namespace mx

// Internal invariant: on failure throws mx::Error naming the condition and the
// source location, followed by the streamed message pieces.
#define MX_CHECK(cond, ...)                                                                   \
  do {                                                                                        \
    if (!(cond))                                                                              \
      ::mx::detail::throw_check_failure(#cond, __FILE__, __LINE__,                            \
                                        ::mx::detail::concat("" __VA_OPT__(, ) __VA_ARGS__)); \
  } while (0)
