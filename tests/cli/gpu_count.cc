// Prints how many GPUs mx sees and whether it was built with CUDA, for the
// GPU end-to-end scripts (train_gpu.cmake), which skip without one.
#include <iostream>

#include "base/gpu.h"

int main() {
  std::cout << mx::gpu::device_count()
            << " GPU(s) (CUDA build: " << (mx::gpu::compiled_with_cuda() ? "yes" : "no") << ")\n";
  return 0;
}
