// The thread budget: engine workers, BLAS threads and parallel loops share
// one number of threads so they do not oversubscribe the cores.
#pragma once

namespace mx {

// MX_NUM_THREADS (or a program's --threads) when set, else the number of
// cores (runtime_config.h).
int thread_budget();

}  // namespace mx
