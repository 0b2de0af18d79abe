// The CPU counterpart of op/cuda/launch.cuh: runs an MX_HOST_DEVICE functor
// for every element index, so the CPU tests exercise exactly the per-element
// logic our CUDA kernels run (tests/op/test_gpu_kernels_host.cc).
#pragma once

#include <cstdint>

namespace mx::op {

template <typename F>
void for_each_element_host(int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) f(i);
}

}  // namespace mx::op
