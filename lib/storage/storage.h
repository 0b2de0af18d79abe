// Device memory. Each device has a pool that keeps freed blocks for reuse
// (keyed by rounded size) and counts live, pooled and peak bytes; the memory
// figures mx reports come from these counters.
//
// Memory is handed out as Storage: an RAII handle that gives its block back to
// the pool when the last owner lets go. Unlike MXNet's pool, a pool can be
// trimmed, and a failed device allocation first releases the cached blocks
// and retries; when it fails for good the error says how much was asked for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/context.h"

namespace mx {

struct StorageStats {
  int64_t live_bytes = 0;          // handed out and not yet given back
  int64_t peak_bytes = 0;          // highest live_bytes since the last reset_peak()
  int64_t pooled_bytes = 0;        // given back and kept for reuse
  int64_t device_allocations = 0;  // calls to the device allocator (pool misses)
  int64_t requests = 0;            // allocations asked of the pool
};

// Allocates raw memory on one device. Implementations: CPU (aligned), GPU (CUDA).
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // Returns nullptr when the device is out of memory.
  virtual void* allocate(size_t bytes) = 0;
  virtual void deallocate(void* ptr, size_t bytes) = 0;
  virtual Context context() const = 0;
};

std::unique_ptr<DeviceAllocator> make_cpu_allocator();
// Throws Error when mx was built without CUDA or the device does not exist.
std::unique_ptr<DeviceAllocator> make_gpu_allocator(int device_id);

class StoragePool;

// An owned block of device memory. Move-only; frees into its pool.
class Storage {
 public:
  Storage() = default;
  Storage(Storage&& other) noexcept;
  Storage& operator=(Storage&& other) noexcept;
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  ~Storage();

  void* data() const { return ptr_; }
  size_t size() const { return size_; }
  Context context() const;
  explicit operator bool() const { return ptr_ != nullptr; }
  void reset();

 private:
  friend class StoragePool;
  Storage(std::shared_ptr<StoragePool> pool, void* ptr, size_t size, size_t rounded)
      : pool_(std::move(pool)), ptr_(ptr), size_(size), rounded_(rounded) {}

  std::shared_ptr<StoragePool> pool_;
  void* ptr_ = nullptr;
  size_t size_ = 0;     // bytes asked for
  size_t rounded_ = 0;  // bytes of the block (its pool bucket)
};

class StoragePool : public std::enable_shared_from_this<StoragePool> {
 public:
  explicit StoragePool(std::unique_ptr<DeviceAllocator> allocator);
  ~StoragePool();
  StoragePool(const StoragePool&) = delete;
  StoragePool& operator=(const StoragePool&) = delete;

  // A block of at least `bytes` bytes (64-byte aligned). `what` names the
  // purpose in the out-of-memory message. Zero bytes gives an empty Storage.
  Storage allocate(size_t bytes, const std::string& what = "");
  // Returns every pooled (unused) block to the device.
  void trim();
  StorageStats stats() const;
  void reset_peak();
  Context context() const { return allocator_->context(); }

  // The size class a request is rounded up to.
  static size_t round_size(size_t bytes);

 private:
  friend class Storage;
  void release(void* ptr, size_t rounded);
  void trim_locked();

  std::unique_ptr<DeviceAllocator> allocator_;
  mutable std::mutex mutex_;
  std::unordered_map<size_t, std::vector<void*>> free_blocks_;
  StorageStats stats_;
};

// The pool of each device, created on first use. Pools outlive every Storage
// handed out (a Storage shares ownership of its pool).
std::shared_ptr<StoragePool> storage_pool(Context ctx);
// Shorthand for storage_pool(ctx)->allocate(bytes, what).
Storage allocate_storage(Context ctx, size_t bytes, const std::string& what = "");

}  // namespace mx
