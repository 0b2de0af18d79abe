#include "base/threads.h"

#include <cstdlib>
#include <string>
#include <thread>

#include "base/logging.h"

namespace mx {

int thread_budget() {
  static const int budget = [] {
    int cores = static_cast<int>(std::thread::hardware_concurrency());
    if (cores <= 0) cores = 1;
    const char* env = std::getenv("MX_NUM_THREADS");
    if (env == nullptr || *env == '\0') return cores;
    char* end = nullptr;
    long value = std::strtol(env, &end, 10);
    if (*end != '\0' || value <= 0 || value > 1024) {
      MX_LOG(kWarning) << "MX_NUM_THREADS='" << env << "' is not a positive integer; using "
                       << cores;
      return cores;
    }
    return static_cast<int>(value);
  }();
  return budget;
}

}  // namespace mx
