#include "base/threads.h"

#include "base/runtime_config.h"

namespace mx {

int thread_budget() { return runtime_config().num_threads; }

}  // namespace mx
