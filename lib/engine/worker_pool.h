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
  // Only threads 0..workers-1 take operations from now on (clamped to
  // 1..size); the others finish what they run and then wait.
  void set_active(int workers);
  int size() const { return static_cast<int>(threads_.size()); }

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
  std::condition_variable ready_;   // active threads wait here for work
  std::condition_variable parked_;  // threads left out by set_active
  std::priority_queue<Entry> queue_;
  int idle_ = 0;    // threads waiting on ready_ (active ones only)
  int active_ = 0;  // threads that take operations: the first active_
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace mx
