#include "base/gpu_timer.h"

#include "base/error.h"

#if MX_USE_CUDA
#include <cuda_runtime.h>
#endif

namespace mx::gpu {

#if MX_USE_CUDA
namespace {
void check(cudaError_t err, const char* what) {
  if (err != cudaSuccess) throw Error(str("CUDA error in ", what, ": ", cudaGetErrorString(err)));
}
cudaEvent_t event(void* e) { return static_cast<cudaEvent_t>(e); }
}  // namespace

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
  if (start_ != nullptr) cudaEventDestroy(event(start_));
  if (stop_ != nullptr) cudaEventDestroy(event(stop_));
}

void StreamTimer::start(void* stream) {
  check(cudaEventRecord(event(start_), static_cast<cudaStream_t>(stream)), "cudaEventRecord");
}

void StreamTimer::stop(void* stream) {
  check(cudaEventRecord(event(stop_), static_cast<cudaStream_t>(stream)), "cudaEventRecord");
}

double StreamTimer::elapsed_ms() const {
  check(cudaEventSynchronize(event(stop_)), "cudaEventSynchronize");
  float ms = 0;
  check(cudaEventElapsedTime(&ms, event(start_), event(stop_)), "cudaEventElapsedTime");
  return ms;
}
#else
StreamTimer::StreamTimer(int device) {
  throw Error(str("gpu:", device, " timing asked for, but this build of mx has no CUDA support"));
}
StreamTimer::~StreamTimer() = default;
void StreamTimer::start(void*) {}
void StreamTimer::stop(void*) {}
double StreamTimer::elapsed_ms() const { return 0; }
#endif

}  // namespace mx::gpu
