// Thin wrappers over the CUDA runtime, so code outside the .cu files needs no
// CUDA headers and a build without CUDA gives clear errors instead of link
// failures. Streams are passed around as void* (a cudaStream_t).
#pragma once

#include <cstddef>
#include <memory>

namespace mx::gpu {

// True when mx was built with CUDA.
bool compiled_with_cuda();
// Number of usable GPUs; 0 without CUDA or without a driver/device.
int device_count();
// Throws Error when `device` does not exist.
void set_device(int device);
// The compute capability of `device` as major * 10 + minor (90 for an H100);
// 0 where it cannot be read (no such device, no CUDA).
int compute_capability(int device);
void* create_stream(int device);
void destroy_stream(void* stream);
// Waits for `stream` (or for the whole device when stream is nullptr);
// throws Error with CUDA's message if a kernel on it failed.
void synchronize(void* stream, int device);
enum class CopyKind { kHostToDevice, kDeviceToHost, kDeviceToDevice };
// Asynchronous copy on `stream`; the caller synchronizes.
void copy(void* dst, const void* src, size_t bytes, CopyKind kind, void* stream);
// cudaDeviceSynchronize on `device`, leaving the calling thread's current
// device as it was.
void synchronize_device(int device);

// A point in the work queued on a stream (a CUDA event recorded there).
// Another stream can be made to wait for it without the host waiting; the
// host can wait for it. The engine keeps one per finished GPU operation on
// the variables it touched (engine/stream_fence.h).
class StreamEvent {
 public:
  // Records the work queued on `stream` of gpu:`device` so far.
  StreamEvent(void* stream, int device);
  ~StreamEvent();
  StreamEvent(const StreamEvent&) = delete;
  StreamEvent& operator=(const StreamEvent&) = delete;

  void* stream() const { return stream_; }
  int device() const { return device_; }
  // Work queued on `other` from now on starts after this point.
  void enqueue_wait(void* other) const;
  // Blocks until the work before this point is done; throws Error with
  // CUDA's message when a kernel in it failed.
  void synchronize() const;

 private:
  void* stream_;
  int device_;
  void* event_ = nullptr;
};

}  // namespace mx::gpu
