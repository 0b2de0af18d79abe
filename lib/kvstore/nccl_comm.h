// Summing the GPUs' gradients with NCCL for the `device` KVStore. One
// communicator per set of local GPUs (ncclCommInitAll, rank i = devices[i]);
// a reduction is one ncclGroupStart/End around one ncclReduce per GPU, each
// on that GPU's own stream of the communicator. It is called from an engine
// operation whose inputs are already complete (the engine synchronizes the
// stream of each operation that wrote them), and it waits for its streams
// before returning, so the engine may mark the result ready.
//
// The pure logic (which GPUs take part, in which order) is compiled without
// CUDA too, for the tests.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/context.h"
#include "base/dtype.h"

namespace mx::kvstore {

// The distinct GPU ids of the arrays of one push, in order of first
// appearance; throws Error naming `key` when an array is not on a GPU.
// Replicas on one GPU (two arrays there) are summed on it before NCCL runs
// across GPUs: NCCL takes one rank per GPU.
std::vector<int> nccl_devices(const std::vector<Context>& contexts, int key);
// The rank of `device` in `devices`; throws Error naming `key` when absent.
int nccl_rank(const std::vector<int>& devices, int device, int key);

#if MX_USE_CUDA
class NcclComm {
 public:
  // Throws Error naming the failing call (ncclCommInitAll, cudaStreamCreate...).
  explicit NcclComm(std::vector<int> devices);
  ~NcclComm();
  NcclComm(const NcclComm&) = delete;
  NcclComm& operator=(const NcclComm&) = delete;

  const std::vector<int>& devices() const { return devices_; }
  // recv (on devices()[root]) = the sum of sends[r] (on devices()[r]), each
  // `count` elements of `dtype` (float32 or float64); blocks until done.
  void reduce_sum(const std::vector<const void*>& sends, void* recv, int root, int64_t count,
                  DType dtype);

 private:
  struct Handles;
  std::mutex mutex_;  // NCCL calls on one communicator must not overlap
  std::vector<int> devices_;
  std::unique_ptr<Handles> handles_;
};
#endif

}  // namespace mx::kvstore
