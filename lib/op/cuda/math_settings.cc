#include "op/cuda/math_settings.h"

#include <cstdlib>
#include <cstring>

namespace mx::op::cuda {
namespace {

bool env_is_one(const char* name) {
  const char* env = std::getenv(name);
  return env != nullptr && std::strcmp(env, "1") == 0;
}

}  // namespace

bool tf32_allowed() {
  static const bool allowed = env_is_one("MX_GPU_TF32");
  return allowed;
}

bool deterministic_algorithms() {
  static const bool deterministic = env_is_one("MX_GPU_DETERMINISTIC");
  return deterministic;
}

}  // namespace mx::op::cuda
