// Loops shared by the CPU kernels: element-wise maps over contiguous memory,
// split over the thread budget when large enough to pay for it.
#pragma once

#include <cstdint>

#include "base/parallel.h"
#include "op/tensor_ref.h"

namespace mx::op {

// Below this many elements a loop runs on one thread.
inline constexpr int64_t kParallelGrain = 32768;

// out[i] (req) f(i) for i in [0, n).
template <typename T, typename F>
void map_index(T* out, int64_t n, OpReq req, F f) {
  if (req == OpReq::kNull) return;
  parallel_for(n, kParallelGrain, [&](int64_t begin, int64_t end) {
    if (req == OpReq::kAdd) {
      for (int64_t i = begin; i < end; ++i) out[i] += f(i);
    } else {
      for (int64_t i = begin; i < end; ++i) out[i] = f(i);
    }
  });
}

}  // namespace mx::op
