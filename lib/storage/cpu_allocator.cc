#include <cstdlib>

#include "storage/storage.h"

namespace mx {
namespace {

// 64-byte alignment: a cache line, and enough for AVX-512 loads.
constexpr size_t kCpuAlignment = 64;

class CpuAllocator final : public DeviceAllocator {
 public:
  void* allocate(size_t bytes) override {
    void* ptr = nullptr;
    if (posix_memalign(&ptr, kCpuAlignment, bytes) != 0) return nullptr;
    return ptr;
  }
  void deallocate(void* ptr, size_t /*bytes*/) override { std::free(ptr); }
  Context context() const override { return Context::cpu(); }
};

}  // namespace

std::unique_ptr<DeviceAllocator> make_cpu_allocator() { return std::make_unique<CpuAllocator>(); }

}  // namespace mx
