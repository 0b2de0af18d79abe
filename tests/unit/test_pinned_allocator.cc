// Pinned host memory: blocks that were pinned go back through unpin, the
// fallback blocks through the pageable allocator; a failure to pin warns
// once and still hands out usable memory.
#include <doctest/doctest.h>

#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "base/gpu.h"
#include "storage/pinned_allocator.h"
#include "storage/storage.h"

using namespace mx;

namespace {

struct FakePinning {
  bool succeed = true;
  std::set<void*> pinned, unpinned;
  std::vector<std::string> warnings;

  PinnedHostAllocator::Pinning functions() {
    PinnedHostAllocator::Pinning p;
    p.pin = [this](size_t bytes, std::string& why) -> void* {
      if (!succeed) {
        why = "no driver";
        return nullptr;
      }
      void* ptr = std::malloc(bytes);
      pinned.insert(ptr);
      return ptr;
    };
    p.unpin = [this](void* ptr) {
      unpinned.insert(ptr);
      std::free(ptr);
    };
    p.warn = [this](const std::string& m) { warnings.push_back(m); };
    return p;
  }
};

}  // namespace

TEST_CASE("pinned allocator: pinned blocks are unpinned, fallback blocks freed as pageable") {
  FakePinning fake;
  PinnedHostAllocator allocator(1, fake.functions());
  CHECK(allocator.context() == Context{DeviceType::kCPUPinned, 1});

  void* a = allocator.allocate(256);
  REQUIRE(a != nullptr);
  CHECK(fake.pinned.count(a) == 1);
  CHECK(allocator.pinned_blocks() == 1);

  fake.succeed = false;
  void* b = allocator.allocate(128);
  void* c = allocator.allocate(64);
  REQUIRE(b != nullptr);
  REQUIRE(c != nullptr);
  std::memset(b, 7, 128);  // pageable memory is usable memory
  CHECK(allocator.pinned_blocks() == 1);
  REQUIRE(fake.warnings.size() == 1);  // one warning, however many fallbacks
  CHECK(fake.warnings[0].find("cpu_pinned:1: cannot pin host memory (no driver)") !=
        std::string::npos);
  CHECK(fake.warnings[0].find("pageable memory") != std::string::npos);

  allocator.deallocate(b, 128);
  allocator.deallocate(c, 64);
  CHECK(fake.unpinned.empty());  // fallback blocks are not unpinned
  allocator.deallocate(a, 256);
  CHECK(fake.unpinned == std::set<void*>{a});
  CHECK(allocator.pinned_blocks() == 0);
}

TEST_CASE("pinned allocator: the cpu_pinned pool works without a GPU") {
  // Without a driver the real allocator falls back to pageable memory (one
  // warning); with a GPU the memory is pinned. Either way it is host memory.
  auto pool = storage_pool(Context{DeviceType::kCPUPinned, 0});
  CHECK(pool->context() == Context{DeviceType::kCPUPinned, 0});
  CHECK(pool != storage_pool(Context::cpu(0)));  // its own pool, not the pageable one
  Storage block = pool->allocate(1000, "batch");
  REQUIRE(block);
  std::memset(block.data(), 1, 1000);
  CHECK(static_cast<unsigned char*>(block.data())[999] == 1);
  CHECK(block.context().type == DeviceType::kCPUPinned);
  if (gpu::device_count() == 0) MESSAGE("no GPU: the cpu_pinned pool used pageable memory");
}
