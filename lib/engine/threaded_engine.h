// The threaded engine: operations run on per-device worker threads as soon
// as their variables allow.
#pragma once

#include <atomic>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "engine/engine.h"
#include "engine/operation.h"
#include "engine/worker_pool.h"

namespace mx {

class ThreadedEngine final : public Engine {
 public:
  // `sync_each_gpu_op`: a GPU operation counts as finished only when its
  // stream has run its kernels (MX_GPU_SYNC=1; finds the operation behind an
  // asynchronous CUDA error). Otherwise once they are queued (stream_fence.h).
  ThreadedEngine(int cpu_threads, bool sync_each_gpu_op);
  ~ThreadedEngine() override;

  VarHandle new_var() override;
  void push_async(AsyncFn fn, Context ctx, std::vector<Var*> reads, std::vector<Var*> writes,
                  FnProperty prop, int priority, std::string name) override;
  void wait_for_var(Var* var) override;
  void wait_all() override;
  int64_t pending() const override { return pending_.load(); }
  void set_active_cpu_workers(int workers) override { cpu_pool_->set_active(workers); }
  EngineKind kind() const override { return EngineKind::kThreaded; }

 protected:
  void delete_var(std::unique_ptr<Var> var, std::function<void()> on_delete) override;

 private:
  // Adds the operation to its variables' queues; runs it when all are ready.
  void schedule(std::unique_ptr<Operation> op);
  void dispatch(Operation* op);
  void execute(Operation* op, RunContext rctx);
  void complete(Operation* op, std::exception_ptr error, GpuEventPtr queued = nullptr);
  // Makes `op` wait for the GPU work its variables' earlier operations left
  // queued: its stream waits on their events, or the host does.
  static void wait_for_queued_gpu_work(const Operation& op, const RunContext& rctx);
  WorkerPool& pool_for(const Operation& op);

  int cpu_threads_;
  bool sync_each_gpu_op_;
  std::unique_ptr<WorkerPool> cpu_pool_;
  struct GpuPools {
    std::unique_ptr<WorkerPool> compute, copy;
  };
  std::mutex gpu_pools_mutex_;
  std::map<int, GpuPools> gpu_pools_;

  std::atomic<int64_t> pending_{0};
  std::atomic<uint64_t> sequence_{0};
  std::mutex finished_mutex_;
  std::condition_variable finished_;
  std::vector<std::exception_ptr> unreported_;  // guarded by finished_mutex_
};

}  // namespace mx
