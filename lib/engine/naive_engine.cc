#include "engine/naive_engine.h"

#include <algorithm>
#include <condition_variable>

#include "base/gpu.h"

namespace mx {

NaiveEngine::~NaiveEngine() {
  for (auto& [device, stream] : gpu_streams_) gpu::destroy_stream(stream);
}

VarHandle NaiveEngine::new_var() { return VarHandle(this, std::make_unique<Var>()); }

void NaiveEngine::push_async(AsyncFn fn, Context ctx, std::vector<Var*> reads,
                             std::vector<Var*> writes, FnProperty prop, int priority,
                             std::string name) {
  Operation op;
  op.fn = std::move(fn);
  op.ctx = ctx;
  op.reads = std::move(reads);
  op.writes = std::move(writes);
  op.prop = prop;
  op.priority = priority;
  op.name = std::move(name);
  run(op);
}

void* NaiveEngine::stream_for(Context ctx) {
  if (!ctx.is_gpu()) return nullptr;
  for (auto& [device, stream] : gpu_streams_)
    if (device == ctx.id) return stream;
  void* stream = gpu::create_stream(ctx.id);
  gpu_streams_.emplace_back(ctx.id, stream);
  return stream;
}

void NaiveEngine::run(Operation& op) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  normalize_dependencies(op.reads, op.writes);
  // Nothing else runs, so every variable is free; the appends keep each
  // variable's bookkeeping identical to the threaded engine's.
  for (Var* v : op.reads) v->append_read(&op);
  for (Var* v : op.writes) v->append_write(&op);
  std::exception_ptr error;
  if (op.skip_if_input_failed) error = failed_input(op);
  if (!error) {
    RunContext rctx{op.ctx, stream_for(op.ctx)};
    // An asynchronous function may finish on another thread: wait for it.
    std::mutex done_mutex;
    std::condition_variable done_cv;
    bool finished = false;
    OnComplete done([&](std::exception_ptr e) {
      std::lock_guard<std::mutex> l(done_mutex);
      error = e;
      finished = true;
      done_cv.notify_all();
    });
    try {
      // One thread runs every device's operations: make the op's GPU
      // current, as each GPU worker of the threaded engine keeps its own
      // (kernels launch on the current device; there a stream or a
      // cuBLAS/cuDNN handle of another GPU fails).
      if (op.ctx.is_gpu()) gpu::set_device(op.ctx.id);
      op.fn(rctx, done);
    } catch (...) {
      done(std::current_exception());
    }
    std::unique_lock<std::mutex> l(done_mutex);
    done_cv.wait(l, [&] { return finished; });
    l.unlock();
    if (!error && rctx.stream != nullptr) {
      try {
        gpu::synchronize(rctx.stream, op.ctx.id);
      } catch (...) {
        error = std::current_exception();
      }
    }
    if (error) error = name_exception(op.name, error);
  }
  if (error && unreported_.size() < 64 &&
      std::find(unreported_.begin(), unreported_.end(), error) == unreported_.end())
    unreported_.push_back(error);
  std::vector<Operation*> released;  // stays empty: nothing was queued
  for (Var* v : op.reads) v->complete_read(released);
  for (Var* v : op.writes) v->complete_write(error, released);
}

void NaiveEngine::delete_var(std::unique_ptr<Var> var, std::function<void()> on_delete) {
  // All earlier operations have already run.
  if (on_delete) on_delete();
  var.reset();
}

void NaiveEngine::wait_for_var(Var* var) {
  if (auto error = var->exception()) {
    {
      std::lock_guard<std::recursive_mutex> lock(mutex_);
      unreported_.erase(std::remove(unreported_.begin(), unreported_.end(), error),
                        unreported_.end());
    }
    rethrow(error);
  }
}

void NaiveEngine::wait_all() {
  std::exception_ptr first;
  {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    if (!unreported_.empty()) first = unreported_.front();
    unreported_.clear();
  }
  if (first) rethrow(first);
}

}  // namespace mx
