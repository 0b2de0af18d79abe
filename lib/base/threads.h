// The thread budget: engine workers, BLAS threads and parallel loops share
// one number of threads so they do not oversubscribe the cores.
#pragma once

namespace mx {

// MX_NUM_THREADS when set (a positive integer), else the number of cores.
int thread_budget();

}  // namespace mx
