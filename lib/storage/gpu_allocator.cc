#include "base/error.h"
#include "storage/storage.h"

#if MX_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace mx {

#if MX_USE_CUDA
namespace {

// Makes `device` current for one allocator call and puts the calling
// thread's GPU back afterwards: the caller may be another GPU's engine
// worker (or, under the naive engine, the thread running every operation),
// whose later launches, cuBLAS and cuDNN calls must stay on its own GPU.
class DeviceScope {
 public:
  DeviceScope(int device, const char* what) {
    check(cudaGetDevice(&previous_), device, what);
    if (previous_ != device) check(cudaSetDevice(device), device, what);
  }
  ~DeviceScope() {
    int now = previous_;
    if (cudaGetDevice(&now) == cudaSuccess && now != previous_) cudaSetDevice(previous_);
  }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

  static void check(cudaError_t err, int device, const char* what) {
    if (err == cudaSuccess) return;
    cudaGetLastError();
    throw Error(str("gpu:", device, ": ", what, " failed: ", cudaGetErrorName(err), " (",
                    cudaGetErrorString(err), ")"));
  }

 private:
  int previous_ = 0;
};

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
    const DeviceScope scope(device_id_, "cudaSetDevice");
    void* ptr = nullptr;
    const cudaError_t err = cudaMalloc(&ptr, bytes);
    if (err == cudaSuccess) return ptr;
    cudaGetLastError();  // clear the (non-sticky) out-of-memory error
    if (err == cudaErrorMemoryAllocation) return nullptr;
    DeviceScope::check(err, device_id_, "cudaMalloc");
    return nullptr;
  }
  // Never throws (pools free their cache in destructors): on failure there
  // is nothing to do.
  void deallocate(void* ptr, size_t /*bytes*/) override {
    int previous = device_id_;
    if (cudaGetDevice(&previous) != cudaSuccess) previous = device_id_;
    if (previous != device_id_) cudaSetDevice(device_id_);
    cudaFree(ptr);
    if (previous != device_id_) cudaSetDevice(previous);
    cudaGetLastError();
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
