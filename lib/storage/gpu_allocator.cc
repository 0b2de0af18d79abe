#include "base/error.h"
#include "storage/storage.h"

#if MX_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace mx {

#if MX_USE_CUDA
namespace {

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
  void* allocate(size_t bytes) override {
    cudaSetDevice(device_id_);
    void* ptr = nullptr;
    if (cudaMalloc(&ptr, bytes) != cudaSuccess) {
      cudaGetLastError();  // clear the sticky out-of-memory error
      return nullptr;
    }
    return ptr;
  }
  void deallocate(void* ptr, size_t /*bytes*/) override {
    cudaSetDevice(device_id_);
    cudaFree(ptr);
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
