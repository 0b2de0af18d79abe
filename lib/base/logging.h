// Leveled logging to stderr. The level starts at the runtime configuration's
// (MX_LOG_LEVEL: debug, info, warning, error) and set_log_level changes it.
#pragma once

#include <sstream>
#include <string>

namespace mx {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

LogLevel log_level();
void set_log_level(LogLevel level);
// Parses "debug", "info", "warning"/"warn", "error"; throws InputError otherwise.
LogLevel parse_log_level(const std::string& name);

namespace detail {
// One log line; written (with a level prefix) when destroyed.
class LogLine {
 public:
  explicit LogLine(LogLevel level) : level_(level) {}
  LogLine(const LogLine&) = delete;
  LogLine& operator=(const LogLine&) = delete;
  ~LogLine();
  template <typename T>
  LogLine& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  LogLevel level_;
  std::ostringstream stream_;
};
}  // namespace detail

}  // namespace mx

// MX_LOG(kInfo) << "epoch " << e;  The stream is not evaluated below the level.
#define MX_LOG(level)                              \
  if (::mx::LogLevel::level < ::mx::log_level()) { \
  } else                                           \
    ::mx::detail::LogLine(::mx::LogLevel::level)
