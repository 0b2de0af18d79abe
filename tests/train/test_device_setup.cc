// GPU devices asked for by a run are checked against the build and the
// machine before anything is built; the message names where they were asked.
#include <doctest/doctest.h>

#include "base/error.h"
#include "base/gpu.h"
#include "kvstore/nccl_comm.h"
#include "train/device_setup.h"

using namespace mx;
using namespace mx::train;

TEST_CASE("device setup: GPUs must exist in the build and on the machine") {
  const std::vector<Context> cpu_only{Context::cpu()};
  const std::vector<Context> two{Context::cpu(), Context::gpu(1)};
  CHECK_NOTHROW(check_devices(cpu_only, "cfg.yaml:3:12", GpuAvailability{false, 0}));
  CHECK_THROWS_WITH_AS(check_devices(two, "cfg.yaml:3:12", GpuAvailability{false, 0}),
                       doctest::Contains("cfg.yaml:3:12: gpu:1 asked for, but this build of mx has "
                                         "no CUDA support"),
                       InputError);
  CHECK_THROWS_WITH_AS(check_devices(two, "--device", GpuAvailability{true, 0}),
                       doctest::Contains("--device: gpu:1 asked for, but no GPU found"),
                       InputError);
  CHECK_THROWS_WITH_AS(
      check_devices(two, "train.devices", GpuAvailability{true, 1}),
      doctest::Contains("gpu:1 asked for, but only 1 GPU(s) found (gpu:0 to gpu:0)"), InputError);
  CHECK_NOTHROW(check_devices(two, "train.devices", GpuAvailability{true, 2}));
}

TEST_CASE("device setup: this machine's answer matches its GPUs") {
  const GpuAvailability here = gpu_availability();
  CHECK(here.compiled_with_cuda == gpu::compiled_with_cuda());
  CHECK(here.device_count == gpu::device_count());
  CHECK_NOTHROW(check_devices({Context::cpu()}, "x"));  // never asks the driver
  if (here.device_count == 0)
    CHECK_THROWS_AS(check_devices({Context::gpu(0)}, "x"), InputError);
  else
    CHECK_NOTHROW(check_devices({Context::gpu(0)}, "x"));
}

TEST_CASE("nccl: the GPUs of a push, in order, each once; the root among them") {
  using kvstore::nccl_devices;
  using kvstore::nccl_rank;
  CHECK(nccl_devices({Context::gpu(2), Context::gpu(0), Context::gpu(1)}, 7) ==
        std::vector<int>{2, 0, 1});
  // Replicas sharing a GPU: that GPU once (they are summed on it first).
  CHECK(nccl_devices({Context::gpu(1), Context::gpu(0), Context::gpu(1)}, 7) ==
        std::vector<int>{1, 0});
  CHECK_THROWS_WITH(nccl_devices({Context::gpu(0), Context::cpu()}, 3),
                    doctest::Contains("key 3: cpu:0 is not a GPU"));
  CHECK(nccl_rank({2, 0, 1}, 0, 7) == 1);
  CHECK(nccl_rank({2, 0, 1}, 2, 7) == 0);
  CHECK_THROWS_WITH(nccl_rank({2, 0}, 1, 7), doctest::Contains("stored value is on gpu:1"));
}
