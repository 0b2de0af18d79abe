#include "engine/threaded_engine.h"

#include <algorithm>

#include "base/error.h"
#include "base/gpu.h"

namespace mx {
namespace {
// Failures kept for wait_all beyond this count are dropped (the first stays).
constexpr size_t kMaxUnreported = 64;
}  // namespace

ThreadedEngine::ThreadedEngine(int cpu_threads, bool sync_each_gpu_op)
    : cpu_threads_(std::max(1, cpu_threads)),
      sync_each_gpu_op_(sync_each_gpu_op),
      cpu_pool_(std::make_unique<WorkerPool>(
          cpu_threads_, Context::cpu(), false,
          [this](Operation* op, RunContext rctx) { execute(op, rctx); })) {}

ThreadedEngine::~ThreadedEngine() {
  try {
    wait_all();
  } catch (...) {  // nobody is left to report to
  }
  std::lock_guard<std::mutex> lock(gpu_pools_mutex_);
  gpu_pools_.clear();
  cpu_pool_.reset();
}

VarHandle ThreadedEngine::new_var() { return VarHandle(this, std::make_unique<Var>()); }

void ThreadedEngine::push_async(AsyncFn fn, Context ctx, std::vector<Var*> reads,
                                std::vector<Var*> writes, FnProperty prop, int priority,
                                std::string name) {
  auto op = std::make_unique<Operation>();
  op->fn = std::move(fn);
  op->ctx = ctx;
  op->reads = std::move(reads);
  op->writes = std::move(writes);
  op->prop = prop;
  op->priority = priority;
  op->name = std::move(name);
  schedule(std::move(op));
}

void ThreadedEngine::schedule(std::unique_ptr<Operation> owned) {
  if (owned->ctx.is_gpu()) pool_for(*owned);  // fail at push time, not in a worker, on a bad GPU
  normalize_dependencies(owned->reads, owned->writes);
  // From here the engine owns the operation until complete() adopts it again.
  Operation* op = owned.release();
  op->sequence = sequence_.fetch_add(1, std::memory_order_relaxed);
  op->wait.store(static_cast<int>(op->reads.size() + op->writes.size()) + 1);
  pending_.fetch_add(1);
  int ready = 0;
  for (Var* v : op->reads) ready += v->append_read(op) ? 1 : 0;
  for (Var* v : op->writes) ready += v->append_write(op) ? 1 : 0;
  // The extra 1 kept the operation from running before all appends were done.
  if (op->wait.fetch_sub(ready + 1) == ready + 1) dispatch(op);
}

WorkerPool& ThreadedEngine::pool_for(const Operation& op) {
  if (!op.ctx.is_gpu()) return *cpu_pool_;
  std::lock_guard<std::mutex> lock(gpu_pools_mutex_);
  auto& pools = gpu_pools_[op.ctx.id];
  if (!pools.compute) {
    if (op.ctx.id < 0 || op.ctx.id >= gpu::device_count()) {
      gpu_pools_.erase(op.ctx.id);
      gpu::set_device(op.ctx.id);  // throws the "does not exist / no CUDA" error
    }
    auto run = [this](Operation* o, RunContext rctx) { execute(o, rctx); };
    pools.compute = std::make_unique<WorkerPool>(1, op.ctx, true, run);
    pools.copy = std::make_unique<WorkerPool>(1, op.ctx, true, run);
  }
  return op.prop == FnProperty::kCopy ? *pools.copy : *pools.compute;
}

void ThreadedEngine::dispatch(Operation* op) {
  pool_for(*op).submit(op, op->priority, op->sequence);
}

void ThreadedEngine::execute(Operation* op, RunContext rctx) {
  if (op->skip_if_input_failed) {
    if (auto error = failed_input(*op)) {
      complete(op, error);  // pass the input's failure on, unchanged
      return;
    }
  }
  OnComplete done([this, op, rctx](std::exception_ptr error) {
    GpuEventPtr queued;  // what the operation left queued on its stream
    if (rctx.stream != nullptr) {
      try {
        if (sync_each_gpu_op_) {
          if (!error) gpu::synchronize(rctx.stream, rctx.ctx.id);
        } else {
          queued = std::make_shared<const gpu::StreamEvent>(rctx.stream, rctx.ctx.id);
        }
      } catch (...) {
        if (!error) error = std::current_exception();
      }
    }
    complete(op, error ? name_exception(op->name, error) : nullptr, std::move(queued));
  });
  try {
    wait_for_queued_gpu_work(*op, rctx);
    op->fn(rctx, done);
  } catch (...) {
    done(std::current_exception());
  }
}

void ThreadedEngine::wait_for_queued_gpu_work(const Operation& op, const RunContext& rctx) {
  const auto wait = [&](Var* v, bool for_write) {
    for (const GpuEventPtr& event : v->gpu_work_to_wait(rctx.stream, for_write)) {
      if (rctx.stream != nullptr)
        event->enqueue_wait(rctx.stream);
      else
        event->synchronize();
    }
  };
  for (Var* v : op.reads) wait(v, op.waits_for_gpu_readers);
  for (Var* v : op.writes) wait(v, true);
}

void ThreadedEngine::complete(Operation* op, std::exception_ptr error, GpuEventPtr queued) {
  std::unique_ptr<Operation> owned(op);
  if (error) {
    std::lock_guard<std::mutex> lock(finished_mutex_);
    if (unreported_.size() < kMaxUnreported &&
        std::find(unreported_.begin(), unreported_.end(), error) == unreported_.end())
      unreported_.push_back(error);
  }
  std::vector<Operation*> released;
  for (Var* v : op->reads) v->complete_read(released, queued);
  for (Var* v : op->writes) v->complete_write(error, released, queued);
  owned.reset();  // frees the function's captures (and a deleted variable) before waiters wake
  for (Operation* next : released)
    if (next->wait.fetch_sub(1) == 1) dispatch(next);
  if (pending_.fetch_sub(1) == 1) {
    std::lock_guard<std::mutex> lock(finished_mutex_);
    finished_.notify_all();
  }
}

void ThreadedEngine::delete_var(std::unique_ptr<Var> var, std::function<void()> on_delete) {
  auto op = std::make_unique<Operation>();
  op->fn = [on_delete = std::move(on_delete)](RunContext, OnComplete done) {
    if (on_delete) on_delete();
    done();
  };
  op->ctx = Context::cpu();
  op->writes = {var.get()};
  op->name = "delete variable";
  op->skip_if_input_failed = false;
  op->var_to_delete = std::move(var);
  schedule(std::move(op));
}

void ThreadedEngine::wait_for_var(Var* var) {
  struct Signal {
    std::mutex mutex;
    std::condition_variable cv;
    bool done = false;
  };
  auto signal = std::make_shared<Signal>();
  auto op = std::make_unique<Operation>();
  op->fn = [signal](RunContext, OnComplete done) {
    {
      std::lock_guard<std::mutex> lock(signal->mutex);
      signal->done = true;
    }
    signal->cv.notify_all();
    done();
  };
  op->ctx = Context::cpu();
  op->reads = {var};
  op->name = "wait for variable";
  op->skip_if_input_failed = false;
  op->waits_for_gpu_readers = true;  // the caller may write the array next
  schedule(std::move(op));
  {
    std::unique_lock<std::mutex> lock(signal->mutex);
    signal->cv.wait(lock, [&] { return signal->done; });
  }
  if (auto error = var->exception()) {
    {
      std::lock_guard<std::mutex> lock(finished_mutex_);
      unreported_.erase(std::remove(unreported_.begin(), unreported_.end(), error),
                        unreported_.end());
    }
    rethrow(error);
  }
}

void ThreadedEngine::wait_all() {
  std::exception_ptr first;
  {
    std::unique_lock<std::mutex> lock(finished_mutex_);
    finished_.wait(lock, [this] { return pending_.load() == 0; });
    if (!unreported_.empty()) first = unreported_.front();
    unreported_.clear();
  }
  if (first) rethrow(first);
  // Finished GPU operations may have work queued still.
  std::vector<int> devices;
  {
    std::lock_guard<std::mutex> lock(gpu_pools_mutex_);
    for (const auto& [device, pools] : gpu_pools_) devices.push_back(device);
  }
  for (int device : devices) gpu::synchronize_device(device);
}

}  // namespace mx
