// parallel_for: splits a loop over the thread budget. The calling thread
// works too, and a parallel_for inside another runs inline, so the number
// of busy threads stays within the budget (plus concurrent callers).
#pragma once

#include <cstdint>
#include <functional>

namespace mx {

// Calls fn(begin, end) on disjoint chunks covering [0, n), each at least
// `min_chunk` long (except the last). Returns when all are done; re-throws
// the first exception a chunk threw.
void parallel_for(int64_t n, int64_t min_chunk, const std::function<void(int64_t, int64_t)>& fn);

// Number of threads parallel_for uses (the thread budget).
int parallel_threads();

// True on a thread running a chunk of a parallel_for (a pool thread, or the
// caller while it works on its own chunk): a parallel_for started here runs
// inline, and so should any other threading (oneDNN's OpenMP).
bool in_parallel_for();

}  // namespace mx
