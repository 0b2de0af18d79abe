#include "op/dnnl/dnnl_switch.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace mx::op {
namespace {

bool from_environment() {
  if (!dnnl_built()) return false;
  const char* env = std::getenv("MX_DNNL");
  return env == nullptr || *env == '\0' || std::strcmp(env, "0") != 0;
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

}  // namespace mx::op
