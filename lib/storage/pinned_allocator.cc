#include "storage/pinned_allocator.h"

#include "base/error.h"
#include "base/logging.h"
#include "base/strings.h"

#if MX_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace mx {

PinnedHostAllocator::Pinning PinnedHostAllocator::cuda_pinning() {
  Pinning p;
  p.pin = [](size_t bytes, std::string& why) -> void* {
#if MX_USE_CUDA
    void* ptr = nullptr;
    // Portable: every GPU's context may copy from it, not only the current one.
    const cudaError_t err = cudaHostAlloc(&ptr, bytes, cudaHostAllocPortable);
    if (err == cudaSuccess) return ptr;
    cudaGetLastError();  // clear the error: the program goes on with pageable memory
    why = str("cudaHostAlloc failed: ", cudaGetErrorString(err));
    return nullptr;
#else
    (void)bytes;
    why = "this build of mx has no CUDA support";
    return nullptr;
#endif
  };
  p.unpin = [](void* ptr) {
#if MX_USE_CUDA
    cudaFreeHost(ptr);  // nothing to do on failure while freeing
#else
    (void)ptr;
#endif
  };
  p.warn = [](const std::string& message) { MX_LOG(kWarning) << message; };
  return p;
}

PinnedHostAllocator::PinnedHostAllocator(int id, Pinning pinning)
    : id_(id), pinning_(std::move(pinning)), pageable_(make_cpu_allocator()) {}

void* PinnedHostAllocator::allocate(size_t bytes) {
  std::string why;
  if (void* ptr = pinning_.pin(bytes, why)) {
    std::lock_guard<std::mutex> lock(mutex_);
    pinned_.insert(ptr);
    return ptr;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!warned_) {
      warned_ = true;
      pinning_.warn(
          str("cpu_pinned:", id_, ": cannot pin host memory (", why,
              "); using pageable memory, so host-to-GPU copies will not overlap compute"));
    }
  }
  return pageable_->allocate(bytes);
}

void PinnedHostAllocator::deallocate(void* ptr, size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (pinned_.erase(ptr) != 0) {
      pinning_.unpin(ptr);
      return;
    }
  }
  pageable_->deallocate(ptr, bytes);
}

size_t PinnedHostAllocator::pinned_blocks() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return pinned_.size();
}

std::unique_ptr<DeviceAllocator> make_pinned_allocator(int id) {
  return std::make_unique<PinnedHostAllocator>(id, PinnedHostAllocator::cuda_pinning());
}

}  // namespace mx
