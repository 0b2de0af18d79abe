#include "engine/worker_pool.h"

#include <algorithm>

#include "base/gpu.h"
#include "base/logging.h"

namespace mx {

WorkerPool::WorkerPool(int threads, Context ctx, bool gpu_stream, RunFn run)
    : ctx_(ctx), gpu_stream_(gpu_stream), run_(std::move(run)), active_(threads) {
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i)
    threads_.emplace_back([this, i] { work(static_cast<size_t>(i)); });
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  parked_.notify_all();
  for (auto& t : threads_) t.join();
}

void WorkerPool::submit(Operation* op, int priority, uint64_t sequence) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push({priority, sequence, op});
    wake = idle_ > 0;
  }
  // Only a sleeping thread needs a (costly) wake-up; busy ones look at the
  // queue before they sleep. Threads left out wait on parked_, not here.
  if (wake) ready_.notify_one();
}

void WorkerPool::set_active(int workers) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    active_ = std::clamp(workers, 1, size());
  }
  ready_.notify_all();   // threads left out go to parked_
  parked_.notify_all();  // threads let back in go to ready_
}

void WorkerPool::work(size_t index) {
  RunContext rctx{ctx_, nullptr};
  if (gpu_stream_) {
    try {
      rctx.stream = gpu::create_stream(ctx_.id);
    } catch (const std::exception& e) {
      MX_LOG(kError) << "cannot create a stream on " << ctx_.to_string() << ": " << e.what();
    }
  }
  for (;;) {
    Operation* op = nullptr;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      const auto left_out = [&] { return static_cast<int>(index) >= active_; };
      parked_.wait(lock, [&] { return stopping_ || !left_out(); });
      ++idle_;
      ready_.wait(lock, [&] { return stopping_ || left_out() || !queue_.empty(); });
      --idle_;
      if (!stopping_ && left_out()) continue;  // set_active left this thread out
      if (queue_.empty()) break;               // stopping and drained
      op = queue_.top().op;
      queue_.pop();
    }
    run_(op, rctx);
  }
  if (rctx.stream != nullptr) gpu::destroy_stream(rctx.stream);
}

}  // namespace mx
