#include "storage/storage.h"

#include <algorithm>

#include "base/error.h"
#include "base/strings.h"
#include "storage/pinned_allocator.h"

namespace mx {
namespace {

// The error for a request the device refused after the retry; `cached`:
// the pooled bytes given back before it.
Error out_of_memory(Context ctx, size_t bytes, const std::string& what, int64_t live_bytes,
                    int64_t cached) {
  const std::string device = ctx.to_string();
  return Error(str(
      "out of memory on ", device, ": could not allocate ",
      format_bytes(static_cast<double>(bytes)), what.empty() ? std::string() : " for " + what, " (",
      device, " has ", format_bytes(static_cast<double>(live_bytes)), " in use by mx; ",
      cached > 0 ? format_bytes(static_cast<double>(cached)) + " cached was given back and the "
                                                               "allocation retried"
                 : std::string("nothing cached to give back"),
      "); try a smaller batch size, or train.mirror: cheap (or all) to recompute activations in "
      "the backward pass instead of keeping them"));
}

}  // namespace

Storage::Storage(Storage&& other) noexcept
    : pool_(std::move(other.pool_)),
      ptr_(other.ptr_),
      size_(other.size_),
      rounded_(other.rounded_) {
  other.ptr_ = nullptr;
  other.size_ = other.rounded_ = 0;
}

Storage& Storage::operator=(Storage&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = std::move(other.pool_);
    ptr_ = other.ptr_;
    size_ = other.size_;
    rounded_ = other.rounded_;
    other.ptr_ = nullptr;
    other.size_ = other.rounded_ = 0;
  }
  return *this;
}

Storage::~Storage() { reset(); }

void Storage::reset() {
  if (ptr_ != nullptr) pool_->release(ptr_, rounded_);
  ptr_ = nullptr;
  size_ = rounded_ = 0;
  pool_.reset();
}

Context Storage::context() const { return pool_ ? pool_->context() : Context::cpu(); }

StoragePool::StoragePool(std::unique_ptr<DeviceAllocator> allocator)
    : allocator_(std::move(allocator)) {}

StoragePool::~StoragePool() {
  std::lock_guard<std::mutex> lock(mutex_);
  trim_locked();
}

size_t StoragePool::round_size(size_t bytes) {
  // Small blocks: powers of two from 64 B (little waste, few classes).
  // Large blocks: multiples of 1/8 of their power of two, so waste stays
  // under 12.5% while similar sizes still share a class.
  constexpr size_t kMin = 64;
  if (bytes <= kMin) return kMin;
  size_t pow2 = kMin;
  while (pow2 < bytes) pow2 <<= 1;
  if (pow2 <= 4096) return pow2;
  size_t step = pow2 / 16;
  return (bytes + step - 1) / step * step;
}

Storage StoragePool::allocate(size_t bytes, const std::string& what) {
  if (bytes == 0) return Storage();
  const size_t rounded = round_size(bytes);
  void* ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.requests;
    auto it = free_blocks_.find(rounded);
    if (it != free_blocks_.end() && !it->second.empty()) {
      ptr = it->second.back();
      it->second.pop_back();
      stats_.pooled_bytes -= static_cast<int64_t>(rounded);
    } else {
      ptr = allocator_->allocate(rounded);
      const int64_t cached = stats_.pooled_bytes;
      if (ptr == nullptr && cached > 0) {
        // Give the cached blocks back to the device and try once more.
        trim_locked();
        ptr = allocator_->allocate(rounded);
      }
      if (ptr == nullptr) throw out_of_memory(context(), bytes, what, stats_.live_bytes, cached);
      ++stats_.device_allocations;
    }
    stats_.live_bytes += static_cast<int64_t>(rounded);
    stats_.peak_bytes = std::max(stats_.peak_bytes, stats_.live_bytes);
  }
  return Storage(shared_from_this(), ptr, bytes, rounded);
}

void StoragePool::release(void* ptr, size_t rounded) {
  std::lock_guard<std::mutex> lock(mutex_);
  free_blocks_[rounded].push_back(ptr);
  stats_.live_bytes -= static_cast<int64_t>(rounded);
  stats_.pooled_bytes += static_cast<int64_t>(rounded);
}

void StoragePool::trim() {
  std::lock_guard<std::mutex> lock(mutex_);
  trim_locked();
}

void StoragePool::trim_locked() {
  for (auto& [size, blocks] : free_blocks_)
    for (void* p : blocks) allocator_->deallocate(p, size);
  free_blocks_.clear();
  stats_.pooled_bytes = 0;
}

StorageStats StoragePool::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

void StoragePool::reset_peak() {
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.peak_bytes = stats_.live_bytes;
}

std::shared_ptr<StoragePool> storage_pool(Context ctx) {
  // The registry of device pools: created on first use, never removed, and
  // never destroyed, since engine operations still running while the program
  // exits (the engine drains in its destructor) may allocate.
  struct Registry {
    std::mutex mutex;
    std::unordered_map<Context, std::shared_ptr<StoragePool>> pools;
  };
  static Registry& registry = *new Registry;
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto& pool = registry.pools[ctx];
  if (!pool) {
    pool = std::make_shared<StoragePool>(ctx.is_gpu() ? make_gpu_allocator(ctx.id)
                                         : ctx.type == DeviceType::kCPUPinned
                                             ? make_pinned_allocator(ctx.id)
                                             : make_cpu_allocator());
  }
  return pool;
}

Storage allocate_storage(Context ctx, size_t bytes, const std::string& what) {
  return storage_pool(ctx)->allocate(bytes, what);
}

}  // namespace mx
