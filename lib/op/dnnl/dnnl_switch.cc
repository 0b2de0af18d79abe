#include "op/dnnl/dnnl_switch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "base/logging.h"

namespace mx::op {
namespace {

bool from_environment() {
  if (!dnnl_built()) return false;
  const char* env = std::getenv("MX_DNNL");
  if (env == nullptr || *env == '\0' || std::strcmp(env, "1") == 0) return true;
  if (std::strcmp(env, "0") == 0) return false;
  // A value meant as "off" (false, no) must not leave oneDNN on unnoticed.
  MX_LOG(kWarning) << "MX_DNNL='" << env << "' is neither 0 nor 1; using oneDNN";
  return true;
}

// The process-wide switch (a flag, like the engine's choice from MX_ENGINE).
std::atomic<bool>& flag() {
  static std::atomic<bool> on{from_environment()};
  return on;
}

}  // namespace

bool dnnl_built() { return MX_USE_DNNL != 0; }

bool dnnl_enabled() { return flag().load(std::memory_order_relaxed); }

void set_dnnl_enabled(bool on) { flag().store(on && dnnl_built(), std::memory_order_relaxed); }

namespace {
std::atomic<int>& call_threads() {
  static std::atomic<int> threads{0};
  return threads;
}
}  // namespace

void set_dnnl_call_threads(int threads) {
  call_threads().store(threads > 0 ? threads : 0, std::memory_order_relaxed);
}

int dnnl_call_threads() { return call_threads().load(std::memory_order_relaxed); }

}  // namespace mx::op
