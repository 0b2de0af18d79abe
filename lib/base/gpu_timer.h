// GPU time between two points of a stream's work (a pair of CUDA events
// with timing): what the kernels queued between start() and stop() took on
// the GPU, without the host's launch and synchronization costs. Used by the
// executor's per-layer profile on a GPU. Implemented in gpu.cc with the
// other CUDA runtime wrappers.
#pragma once

namespace mx::gpu {

class StreamTimer {
 public:
  // Timing events on gpu:`device`; throws Error without CUDA.
  explicit StreamTimer(int device);
  ~StreamTimer();
  StreamTimer(const StreamTimer&) = delete;
  StreamTimer& operator=(const StreamTimer&) = delete;

  void start(void* stream);
  void stop(void* stream);
  // Milliseconds from start to stop; waits for stop's point.
  double elapsed_ms() const;

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

}  // namespace mx::gpu
