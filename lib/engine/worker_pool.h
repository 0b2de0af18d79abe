// Threads that run ready operations of one device, highest priority first
// (push order among equals). A GPU worker owns a CUDA stream.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "engine/engine.h"

namespace mx {

struct Operation;

class WorkerPool {
 public:
  using RunFn = std::function<void(Operation*, RunContext)>;
  // With `gpu_stream`, each thread creates a stream on ctx's device.
  WorkerPool(int threads, Context ctx, bool gpu_stream, RunFn run);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  void submit(Operation* op, int priority, uint64_t sequence);

 private:
  struct Entry {
    int priority;
    uint64_t sequence;
    Operation* op;
    bool operator<(const Entry& o) const {
      return priority != o.priority ? priority < o.priority : sequence > o.sequence;
    }
  };
  void work(size_t index);

  Context ctx_;
  bool gpu_stream_;
  RunFn run_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::priority_queue<Entry> queue_;
  int idle_ = 0;  // threads waiting on ready_
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mx
