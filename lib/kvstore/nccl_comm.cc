#include "kvstore/nccl_comm.h"

#include <algorithm>

#include "base/error.h"
#include "base/strings.h"

#if MX_USE_CUDA
#include <cuda_runtime.h>
#include <nccl.h>

#include "op/cuda/cuda_check.h"
#endif

namespace mx::kvstore {

std::vector<int> nccl_devices(const std::vector<Context>& contexts, int key) {
  std::vector<int> devices;
  for (const Context& ctx : contexts) {
    if (!ctx.is_gpu())
      throw Error(str("kvstore 'device': key ", key, ": ", ctx.to_string(),
                      " is not a GPU; NCCL sums arrays that all live on GPUs"));
    if (std::find(devices.begin(), devices.end(), ctx.id) == devices.end())
      devices.push_back(ctx.id);
  }
  return devices;
}

int nccl_rank(const std::vector<int>& devices, int device, int key) {
  auto it = std::find(devices.begin(), devices.end(), device);
  if (it == devices.end())
    throw Error(str("kvstore 'device': key ", key, ": the stored value is on gpu:", device,
                    ", which none of the pushed arrays is on"));
  return static_cast<int>(it - devices.begin());
}

#if MX_USE_CUDA
namespace {

constexpr const char* kWhere = "kvstore 'device'";

void check(ncclResult_t result, const char* call) {
  if (result != ncclSuccess)
    throw Error(str(kWhere, ": ", call, " failed: ", ncclGetErrorString(result)));
}

// Restores the calling thread's current GPU (an engine worker's) on exit.
class DeviceGuard {
 public:
  DeviceGuard() { MX_CUDA_CHECK(cudaGetDevice(&previous_), kWhere); }
  ~DeviceGuard() { cudaSetDevice(previous_); }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace

struct NcclComm::Handles {
  std::vector<ncclComm_t> comms;
  std::vector<cudaStream_t> streams;
};

NcclComm::NcclComm(std::vector<int> devices)
    : devices_(std::move(devices)), handles_(std::make_unique<Handles>()) {
  const int n = static_cast<int>(devices_.size());
  DeviceGuard guard;
  handles_->comms.resize(devices_.size(), nullptr);
  check(ncclCommInitAll(handles_->comms.data(), n, devices_.data()), "ncclCommInitAll");
  for (int device : devices_) {
    MX_CUDA_CHECK(cudaSetDevice(device), kWhere);
    cudaStream_t stream = nullptr;
    MX_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), kWhere);
    handles_->streams.push_back(stream);
  }
}

NcclComm::~NcclComm() {
  DeviceGuard guard;
  for (size_t r = 0; r < devices_.size(); ++r) {
    cudaSetDevice(devices_[r]);
    if (r < handles_->streams.size()) cudaStreamDestroy(handles_->streams[r]);
    if (handles_->comms[r] != nullptr) ncclCommDestroy(handles_->comms[r]);
  }
}

void NcclComm::reduce_sum(const std::vector<const void*>& sends, void* recv, int root,
                          int64_t count, DType dtype) {
  if (sends.size() != devices_.size())
    throw Error(str("kvstore 'device': ", sends.size(), " arrays for a communicator of ",
                    devices_.size(), " GPUs"));
  if (count == 0) return;
  if (dtype != DType::kFloat32 && dtype != DType::kFloat64)
    throw Error("kvstore 'device': NCCL sums float32 or float64 arrays, not " +
                std::string(dtype_name(dtype)));
  const ncclDataType_t type = dtype == DType::kFloat64 ? ncclFloat64 : ncclFloat32;
  std::lock_guard<std::mutex> lock(mutex_);
  DeviceGuard guard;
  check(ncclGroupStart(), "ncclGroupStart");
  for (size_t r = 0; r < devices_.size(); ++r) {
    // recvbuff is only used on the root rank.
    const ncclResult_t result = ncclReduce(sends[r], static_cast<int>(r) == root ? recv : nullptr,
                                           static_cast<size_t>(count), type, ncclSum, root,
                                           handles_->comms[r], handles_->streams[r]);
    if (result != ncclSuccess) {
      ncclGroupEnd();  // close the group before reporting
      check(result, "ncclReduce");
    }
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  for (size_t r = 0; r < devices_.size(); ++r) {
    MX_CUDA_CHECK(cudaSetDevice(devices_[r]), kWhere);
    MX_CUDA_CHECK(cudaStreamSynchronize(handles_->streams[r]), kWhere);
  }
}
#endif

}  // namespace mx::kvstore
