#include "base/gpu.h"

#include "base/error.h"
#include "base/gpu_timer.h"

#if MX_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace mx::gpu {

#if MX_USE_CUDA
namespace {
void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(str("CUDA error in ", what, ": ", cudaGetErrorString(err)));
}

// Makes `device` current for its lifetime and restores the previous one:
// completions may run on threads whose current device belongs to others.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};
}  // namespace

bool compiled_with_cuda() { return true; }

int device_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return count;
}

void set_device(int device) {
  int count = device_count();
  if (device < 0 || device >= count)
    throw Error(str("gpu:", device, " does not exist (", count, " GPU(s) found)"));
  check(cudaSetDevice(device), "cudaSetDevice");
}

int compute_capability(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return 0;
  }
  return major * 10 + minor;
}

void* create_stream(int device) {
  set_device(device);
  cudaStream_t stream = nullptr;
  check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  return stream;
}

void destroy_stream(void* stream) {
  if (stream != nullptr) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}

void synchronize(void* stream, int device) {
  if (stream == nullptr) {
    set_device(device);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  } else {
    check(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize");
  }
}

void synchronize_device(int device) {
  DeviceScope scope(device);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

StreamEvent::StreamEvent(void* stream, int device) : stream_(stream), device_(device) {
  DeviceScope scope(device);  // an event is recorded on a stream of its own device
  cudaEvent_t event = nullptr;
  check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
  if (const cudaError_t err = cudaEventRecord(event, static_cast<cudaStream_t>(stream));
      err != cudaSuccess) {
    cudaEventDestroy(event);
    check(err, "cudaEventRecord");
  }
  event_ = event;
}

StreamEvent::~StreamEvent() {
  if (event_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(event_));
}

void StreamEvent::enqueue_wait(void* other) const {
  check(cudaStreamWaitEvent(static_cast<cudaStream_t>(other), static_cast<cudaEvent_t>(event_), 0),
        "cudaStreamWaitEvent");
}

void StreamEvent::synchronize() const {
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(event_)), "cudaEventSynchronize");
}

StreamTimer::StreamTimer(int device) {
  int previous = 0;
  check(cudaGetDevice(&previous), "cudaGetDevice");
  check(cudaSetDevice(device), "cudaSetDevice");
  cudaEvent_t a = nullptr, b = nullptr;
  const cudaError_t err_a = cudaEventCreate(&a);
  const cudaError_t err_b = cudaEventCreate(&b);
  start_ = a;
  stop_ = b;
  cudaSetDevice(previous);
  check(err_a, "cudaEventCreate");
  check(err_b, "cudaEventCreate");
}

StreamTimer::~StreamTimer() {
  if (start_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(start_));
  if (stop_ != nullptr) cudaEventDestroy(static_cast<cudaEvent_t>(stop_));
}

void StreamTimer::start(void* stream) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(start_), static_cast<cudaStream_t>(stream)),
        "cudaEventRecord");
}

void StreamTimer::stop(void* stream) {
  check(cudaEventRecord(static_cast<cudaEvent_t>(stop_), static_cast<cudaStream_t>(stream)),
        "cudaEventRecord");
}

double StreamTimer::elapsed_ms() const {
  check(cudaEventSynchronize(static_cast<cudaEvent_t>(stop_)), "cudaEventSynchronize");
  float ms = 0;
  check(
      cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(start_), static_cast<cudaEvent_t>(stop_)),
      "cudaEventElapsedTime");
  return ms;
}

void copy(void* dst, const void* src, size_t bytes, CopyKind kind, void* stream) {
  cudaMemcpyKind k = kind == CopyKind::kHostToDevice   ? cudaMemcpyHostToDevice
                     : kind == CopyKind::kDeviceToHost ? cudaMemcpyDeviceToHost
                                                       : cudaMemcpyDeviceToDevice;
  check(cudaMemcpyAsync(dst, src, bytes, k, static_cast<cudaStream_t>(stream)), "cudaMemcpyAsync");
}
#else
namespace {
[[noreturn]] void no_cuda(int device = 0) {
  throw Error(str("gpu:", device,
                  " was requested, but this build of mx has no CUDA support "
                  "(configure with -DMX_USE_CUDA=ON on a machine with the CUDA toolkit)"));
}
}  // namespace

bool compiled_with_cuda() { return false; }
int device_count() { return 0; }
int compute_capability(int) { return 0; }
void set_device(int device) { no_cuda(device); }
void* create_stream(int device) { no_cuda(device); }
void destroy_stream(void*) {}
void synchronize(void*, int device) { no_cuda(device); }
void copy(void*, const void*, size_t, CopyKind, void*) { no_cuda(); }
void synchronize_device(int device) { no_cuda(device); }
StreamEvent::StreamEvent(void* stream, int device) : stream_(stream), device_(device) {
  no_cuda(device);
}
StreamEvent::~StreamEvent() { (void)event_; }  // never created without CUDA
void StreamEvent::enqueue_wait(void*) const { no_cuda(device_); }
void StreamEvent::synchronize() const { no_cuda(device_); }
StreamTimer::StreamTimer(int device) { no_cuda(device); }
StreamTimer::~StreamTimer() { (void)start_, (void)stop_; }  // never created without CUDA
void StreamTimer::start(void*) {}
void StreamTimer::stop(void*) {}
double StreamTimer::elapsed_ms() const { return 0; }
#endif

}  // namespace mx::gpu
