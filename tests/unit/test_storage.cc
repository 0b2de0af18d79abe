#include <doctest/doctest.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "base/error.h"
#include "base/gpu.h"
#include "storage/storage.h"

using namespace mx;

namespace {

// A CPU allocator that can be told to fail, to test the pool's retry path.
class FlakyAllocator final : public DeviceAllocator {
 public:
  explicit FlakyAllocator(int64_t capacity, int64_t* device_bytes)
      : capacity_(capacity), device_bytes_(device_bytes) {}
  void* allocate(size_t bytes) override {
    if (*device_bytes_ + static_cast<int64_t>(bytes) > capacity_) return nullptr;
    *device_bytes_ += static_cast<int64_t>(bytes);
    return inner_->allocate(bytes);
  }
  void deallocate(void* ptr, size_t bytes) override {
    *device_bytes_ -= static_cast<int64_t>(bytes);
    inner_->deallocate(ptr, bytes);
  }
  Context context() const override { return Context::cpu(); }

 private:
  std::unique_ptr<DeviceAllocator> inner_ = make_cpu_allocator();
  int64_t capacity_;
  int64_t* device_bytes_;
};

}  // namespace

TEST_CASE("size classes round up with bounded waste") {
  CHECK(StoragePool::round_size(1) == 64);
  CHECK(StoragePool::round_size(64) == 64);
  CHECK(StoragePool::round_size(65) == 128);
  CHECK(StoragePool::round_size(4096) == 4096);
  for (size_t n : {4097ul, 10000ul, 123457ul, 1ul << 20, (1ul << 20) + 1, 300000000ul}) {
    size_t r = StoragePool::round_size(n);
    CHECK(r >= n);
    CHECK(static_cast<double>(r - n) <= 0.125 * static_cast<double>(n));
  }
}

TEST_CASE("pool counts live, peak and pooled bytes and reuses blocks") {
  auto pool = std::make_shared<StoragePool>(make_cpu_allocator());
  {
    Storage a = pool->allocate(1000, "a");
    Storage b = pool->allocate(5000, "b");
    CHECK(reinterpret_cast<uintptr_t>(a.data()) % 64 == 0);
    CHECK(a.size() == 1000);
    std::memset(a.data(), 1, a.size());
    auto s = pool->stats();
    CHECK(s.live_bytes == 1024 + static_cast<int64_t>(StoragePool::round_size(5000)));
    CHECK(s.peak_bytes == s.live_bytes);
    CHECK(s.device_allocations == 2);
  }
  auto s = pool->stats();
  CHECK(s.live_bytes == 0);
  CHECK(s.peak_bytes > 0);
  CHECK(s.pooled_bytes == 1024 + static_cast<int64_t>(StoragePool::round_size(5000)));
  {
    Storage c = pool->allocate(900);  // same class as 1000: reused
    CHECK(pool->stats().device_allocations == 2);
    CHECK(pool->stats().requests == 3);
  }
  pool->reset_peak();
  CHECK(pool->stats().peak_bytes == 0);
  pool->trim();
  CHECK(pool->stats().pooled_bytes == 0);
  CHECK(!pool->allocate(0));
}

TEST_CASE("Storage is move-only and frees exactly once") {
  auto pool = std::make_shared<StoragePool>(make_cpu_allocator());
  Storage a = pool->allocate(100);
  void* p = a.data();
  Storage b = std::move(a);
  CHECK(!a);
  CHECK(b.data() == p);
  Storage c;
  c = std::move(b);
  CHECK(pool->stats().live_bytes == 128);
  c.reset();
  CHECK(pool->stats().live_bytes == 0);
  CHECK(pool->stats().pooled_bytes == 128);
}

TEST_CASE("a failed allocation releases pooled blocks and retries, then names the request") {
  int64_t device_bytes = 0;
  auto pool = std::make_shared<StoragePool>(std::make_unique<FlakyAllocator>(8192, &device_bytes));
  { Storage a = pool->allocate(4096); }  // now pooled in the 4 KiB class
  CHECK(device_bytes == 4096);
  // 8 KiB does not fit next to the pooled 4 KiB block; the pool gives it back and retries.
  Storage big = pool->allocate(8192, "the big one");
  CHECK(big);
  CHECK(pool->stats().pooled_bytes == 0);
  try {
    pool->allocate(4096, "activations of conv1");
    FAIL("expected out of memory");
  } catch (const Error& e) {
    std::string what = e.what();
    CHECK(what.find("out of memory on cpu:0") != std::string::npos);
    CHECK(what.find("4.00 KiB for activations of conv1") != std::string::npos);
    CHECK(what.find("smaller batch") != std::string::npos);
  }
}

TEST_CASE("out of memory: the message gives use and cache, and the pool stays usable after") {
  int64_t device_bytes = 0;
  auto pool = std::make_shared<StoragePool>(std::make_unique<FlakyAllocator>(16384, &device_bytes));
  Storage kept = pool->allocate(8192, "weights");
  { Storage a = pool->allocate(4096); }  // cached in the 4 KiB class
  CHECK(pool->stats().pooled_bytes == 4096);
  try {
    pool->allocate(12288, "the gradient of conv2");
    FAIL("expected out of memory");
  } catch (const Error& e) {
    const std::string what = e.what();
    INFO(what);
    CHECK(what.find("could not allocate 12.00 KiB for the gradient of conv2") != std::string::npos);
    CHECK(what.find("cpu:0 has 8.00 KiB in use") != std::string::npos);
    CHECK(what.find("4.00 KiB cached was given back") != std::string::npos);
    CHECK(what.find("smaller batch size") != std::string::npos);
    CHECK(what.find("train.mirror") != std::string::npos);
  }
  // The cache went back to the device before the error; nothing leaked.
  CHECK(pool->stats().pooled_bytes == 0);
  CHECK(pool->stats().live_bytes == 8192);
  CHECK(device_bytes == 8192);
  // Still usable: what fits is allocated, and freeing makes room again.
  Storage fits = pool->allocate(8192, "activations");
  CHECK(fits);
  CHECK(device_bytes == 16384);
  kept.reset();
  fits.reset();
  Storage big = pool->allocate(12288, "the gradient of conv2");
  CHECK(big);
  // Nothing cached: the second failure says so.
  Storage more = pool->allocate(4096);
  CHECK_THROWS_WITH_AS(pool->allocate(4096), doctest::Contains("nothing cached to give back"),
                       Error);
}

TEST_CASE("pool is safe to use from several threads") {
  auto pool = std::make_shared<StoragePool>(make_cpu_allocator());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&pool, t] {
      for (int i = 0; i < 2000; ++i) {
        Storage s = pool->allocate(static_cast<size_t>(64 * ((i + t) % 17 + 1)));
        static_cast<char*>(s.data())[0] = 1;
      }
    });
  for (auto& t : threads) t.join();
  CHECK(pool->stats().live_bytes == 0);
  CHECK(pool->stats().requests == 8000);
}

TEST_CASE("device pools are per context and GPU errors are clear without a GPU") {
  auto p1 = storage_pool(Context::cpu());
  CHECK(p1 == storage_pool(Context::cpu()));
  if (gpu::device_count() == 0) {
    CHECK_THROWS_AS(allocate_storage(Context::gpu(0), 16), Error);
  }
}
