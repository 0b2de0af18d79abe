// GPU tests: the same operations on a GPU must give the CPU's results.
// Without a GPU (or without CUDA in the build) every case is skipped with a message.
#include <doctest/doctest.h>

#include <cstring>
#include <iostream>
#include <vector>

#include "base/gpu.h"
#include "ndarray/ndarray.h"
#include "ndarray/params_io.h"
#include "storage/storage.h"
#include "test_paths.h"

using namespace mx;

namespace {
bool have_gpu() {
  static const bool present = [] {
    if (!gpu::compiled_with_cuda()) {
      std::cout << "SKIPPED: this build has no CUDA support (MX_USE_CUDA=OFF)\n";
      return false;
    }
    if (gpu::device_count() == 0) {
      std::cout << "SKIPPED: no GPU found; the GPU tests run only where a GPU is present\n";
      return false;
    }
    return true;
  }();
  return present;
}
}  // namespace

TEST_CASE("gpu: copies between host and device round trip") {
  if (!have_gpu()) return;
  NDArray host = NDArray::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  NDArray dev = host.copy_to(Context::gpu(0));
  CHECK(dev.ctx() == Context::gpu(0));
  NDArray dev2 = dev.copy();  // device to device
  CHECK(dev2.to_vector<float>() == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("gpu: element-wise kernels match the CPU for every dtype") {
  if (!have_gpu()) return;
  for (DType dtype : kAllDTypes) {
    CAPTURE(dtype_name(dtype));
    NDArray a_cpu = NDArray::full({1000}, 3.0, Context::cpu(), dtype);
    NDArray b_cpu = NDArray::full({1000}, 2.0, Context::cpu(), dtype);
    NDArray a = a_cpu.copy_to(Context::gpu(0));
    NDArray b = b_cpu.copy_to(Context::gpu(0));
    auto same = [&](const NDArray& gpu_result, const NDArray& cpu_result) {
      NDArray back = gpu_result.copy_to(Context::cpu());
      back.wait_to_read();
      cpu_result.wait_to_read();
      CHECK(std::memcmp(back.raw_data(), cpu_result.raw_data(), cpu_result.bytes()) == 0);
    };
    same(a + b, a_cpu + b_cpu);
    same(a - b, a_cpu - b_cpu);
    same(a * b, a_cpu * b_cpu);
    same(a / b, a_cpu / b_cpu);
    same(a * 1.5, a_cpu * 1.5);
    same(7.0 / a, 7.0 / a_cpu);
    same(10.0 - a, 10.0 - a_cpu);
  }
}

TEST_CASE("gpu: the pool counts device memory and params load onto the GPU") {
  if (!have_gpu()) return;
  auto pool = storage_pool(Context::gpu(0));
  Engine::get().wait_all();
  int64_t before = pool->stats().live_bytes;
  {
    NDArray a = NDArray::zeros({1 << 20}, Context::gpu(0));
    a.wait_to_read();
    CHECK(pool->stats().live_bytes >= before + (4 << 20));
  }
  Engine::get().wait_all();
  CHECK(pool->stats().live_bytes == before);
  NamedArrays list =
      load_params(test::fixtures_dir() + "/params/checkpoint-0001.params", Context::gpu(0));
  CHECK(list.arrays[0].ctx() == Context::gpu(0));
  CHECK(list.arrays[0].shape() == Shape{4, 3});
}

TEST_CASE("gpu: a request far beyond the device's memory fails with a clear message") {
  if (!have_gpu()) return;
  try {
    NDArray huge(Shape{int64_t{1} << 40}, Context::gpu(0));
    FAIL("allocated 4 TiB on a GPU");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("out of memory on gpu:0") != std::string::npos);
  }
}
