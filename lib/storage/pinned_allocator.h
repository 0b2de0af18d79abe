// Pinned (page-locked) host memory for batches on their way to a GPU: the
// DMA engine copies such memory asynchronously, so a host-to-device copy on
// the copy stream overlaps compute. Pinning needs a CUDA driver; when it
// fails (no driver, no GPU, the pinned limit reached) the allocator hands out
// ordinary pageable memory instead and says so once, so a program still runs,
// only with slower copies.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include "storage/storage.h"

namespace mx {

class PinnedHostAllocator final : public DeviceAllocator {
 public:
  // How memory is pinned: pin returns nullptr on failure and fills `why`.
  struct Pinning {
    std::function<void*(size_t bytes, std::string& why)> pin;
    std::function<void(void* ptr)> unpin;
    std::function<void(const std::string& message)> warn;
  };
  // cudaHostAlloc/cudaFreeHost (pin always fails without CUDA), warnings to the log.
  static Pinning cuda_pinning();

  PinnedHostAllocator(int id, Pinning pinning);
  ~PinnedHostAllocator() override = default;

  void* allocate(size_t bytes) override;
  void deallocate(void* ptr, size_t bytes) override;
  Context context() const override { return {DeviceType::kCPUPinned, id_}; }

  // Blocks handed out as pinned memory and not yet given back.
  size_t pinned_blocks() const;

 private:
  int id_;
  Pinning pinning_;
  std::unique_ptr<DeviceAllocator> pageable_;  // the fallback
  mutable std::mutex mutex_;
  std::unordered_set<void*> pinned_;
  bool warned_ = false;
};

// The allocator of the cpu_pinned:N pool (storage_pool(Context{kCPUPinned, N})).
std::unique_ptr<DeviceAllocator> make_pinned_allocator(int id);

}  // namespace mx
