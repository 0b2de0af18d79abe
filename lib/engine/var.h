// An engine variable: the queue of operations waiting on one resource.
// Reads that follow each other run together; a write waits until the reads
// and the write before it are done, and the reads after it wait for it.
#pragma once

#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <vector>

#include "base/gpu.h"
#include "engine/stream_fence.h"

namespace mx {

struct Operation;

using GpuEventPtr = std::shared_ptr<const gpu::StreamEvent>;

class Var {
 public:
  // Each returns true when `op` may run now as far as this variable is
  // concerned; otherwise `op` is queued and released by a later complete_*.
  bool append_read(Operation* op);
  bool append_write(Operation* op);
  // Called when an operation that read / wrote this variable has finished;
  // adds the operations this releases to `released`. `queued` is the GPU
  // work the operation left on its stream (nullptr: none; stream_fence.h).
  void complete_read(std::vector<Operation*>& released, GpuEventPtr queued = nullptr);
  // `error` (or nullptr on success) becomes the variable's stored exception.
  void complete_write(std::exception_ptr error, std::vector<Operation*>& released,
                      GpuEventPtr queued = nullptr);
  // The queued GPU work an operation on `stream` (nullptr: the host) must
  // wait for before it reads, or writes (`for_write`), this variable.
  std::vector<GpuEventPtr> gpu_work_to_wait(const void* stream, bool for_write) const;

  std::exception_ptr exception() const;
  // Number of completed writes (a version, as in the paper's tagged queue).
  uint64_t version() const;
  // Unique among all variables of the process (addresses are reused), so
  // (uid, version) names one content of an array: kernels key caches of
  // derived data on it (op/dnnl's reordered weights).
  uint64_t uid() const { return uid_; }

 private:
  struct Pending {
    Operation* op;
    bool is_write;
  };
  void release_front_locked(std::vector<Operation*>& released);

  mutable std::mutex mutex_;
  std::deque<Pending> queue_;  // waiting operations, in push order
  int running_reads_ = 0;
  bool running_write_ = false;
  uint64_t version_ = 0;
  const uint64_t uid_ = next_uid();
  static uint64_t next_uid();
  std::exception_ptr exception_;
  StreamFence<gpu::StreamEvent> fence_;
};

}  // namespace mx
