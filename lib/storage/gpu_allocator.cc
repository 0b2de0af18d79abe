#include "base/error.h"
#include "storage/storage.h"

#if MX_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace mx {

#if MX_USE_CUDA
namespace {

// The error of a failed CUDA call `what` on gpu:`device`.
Error cuda_error(cudaError_t err, int device, const char* what) {
  cudaGetLastError();  // clear a non-sticky error
  return Error(str("gpu:", device, ": ", what, " failed: ", cudaGetErrorName(err), " (",
                   cudaGetErrorString(err), ")"));
}

class GpuAllocator final : public DeviceAllocator {
 public:
  explicit GpuAllocator(int device_id) : device_id_(device_id) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess)
      throw Error(str("gpu:", device_id, " is not usable: ", cudaGetErrorString(err)));
    if (device_id < 0 || device_id >= count)
      throw Error(str("gpu:", device_id, " does not exist (", count, " GPU(s) found)"));
  }
  // nullptr only when the device is out of memory (the pool then gives its
  // cache back and retries); any other failure, such as the sticky error a
  // faulted kernel leaves, is reported as what it is.
  void* allocate(size_t bytes) override {
    if (const cudaError_t err = cudaSetDevice(device_id_); err != cudaSuccess)
      throw cuda_error(err, device_id_, "cudaSetDevice");
    void* ptr = nullptr;
    const cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaSuccess) return ptr;
    if (err != cudaErrorMemoryAllocation) throw cuda_error(err, device_id_, "cudaMalloc");
    cudaGetLastError();  // clear the out-of-memory error
    return nullptr;
  }
  void deallocate(void* ptr, size_t /*bytes*/) override {
    cudaSetDevice(device_id_);
    cudaFree(ptr);  // nothing to do on failure while freeing
  }
  Context context() const override { return Context::gpu(device_id_); }

 private:
  int device_id_;
};

}  // namespace

std::unique_ptr<DeviceAllocator> make_gpu_allocator(int device_id) {
  return std::make_unique<GpuAllocator>(device_id);
}
#else
std::unique_ptr<DeviceAllocator> make_gpu_allocator(int device_id) {
  throw Error(str("gpu:", device_id,
                  " requested, but this build of mx has no CUDA support "
                  "(configure with -DMX_USE_CUDA=ON on a machine with the CUDA toolkit)"));
}
#endif

}  // namespace mx
