#include "base/logging.h"

#include <atomic>
#include <iostream>
#include <mutex>

#include "base/error.h"
#include "base/runtime_config.h"

namespace mx {
namespace {

std::atomic<int>& level_storage() {
  static std::atomic<int> level{[] {
    // Logging never throws: a malformed setting (a library used without a
    // program) shows at info and is reported by the next use that may throw.
    try {
      return static_cast<int>(runtime_config().log_level);
    } catch (const InputError&) {
      return static_cast<int>(LogLevel::kInfo);
    }
  }()};
  return level;
}

const char* level_prefix(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "[debug] ";
    case LogLevel::kInfo: return "";
    case LogLevel::kWarning: return "[warning] ";
    case LogLevel::kError: return "[error] ";
  }
  return "";
}

}  // namespace

LogLevel log_level() { return static_cast<LogLevel>(level_storage().load()); }
void set_log_level(LogLevel level) { level_storage().store(static_cast<int>(level)); }

LogLevel parse_log_level(const std::string& name) {
  if (name == "debug") return LogLevel::kDebug;
  if (name == "info") return LogLevel::kInfo;
  if (name == "warning" || name == "warn") return LogLevel::kWarning;
  if (name == "error") return LogLevel::kError;
  throw InputError("unknown log level '" + name + "' (expected debug, info, warning or error)");
}

namespace detail {
LogLine::~LogLine() {
  // One write per line so lines from several threads do not interleave.
  static std::mutex write_mutex;
  std::string line = std::string(level_prefix(level_)) + stream_.str() + "\n";
  std::lock_guard<std::mutex> lock(write_mutex);
  std::cerr << line << std::flush;
}
}  // namespace detail

}  // namespace mx
