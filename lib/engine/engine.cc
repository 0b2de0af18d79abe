#include "engine/engine.h"

#include "base/runtime_config.h"
#include "base/threads.h"
#include "engine/naive_engine.h"
#include "engine/threaded_engine.h"
#include "engine/var.h"

namespace mx {

VarHandle::VarHandle(Engine* engine, std::unique_ptr<Var> var)
    : engine_(engine), var_(std::move(var)) {}

VarHandle::VarHandle(VarHandle&& other) noexcept
    : engine_(other.engine_), var_(std::move(other.var_)) {}

VarHandle& VarHandle::operator=(VarHandle&& other) noexcept {
  if (this != &other) {
    release();
    engine_ = other.engine_;
    var_ = std::move(other.var_);
  }
  return *this;
}

VarHandle::~VarHandle() { release(); }

void VarHandle::release(std::function<void()> on_delete) {
  if (var_)
    engine_->delete_var(std::move(var_), std::move(on_delete));
  else if (on_delete)
    on_delete();
}

void Engine::push(SyncFn fn, Context ctx, std::vector<Var*> reads, std::vector<Var*> writes,
                  FnProperty prop, int priority, std::string name) {
  push_async(
      [fn = std::move(fn)](RunContext rctx, OnComplete done) {
        fn(rctx);
        done();
      },
      ctx, std::move(reads), std::move(writes), prop, priority, std::move(name));
}

std::unique_ptr<Engine> Engine::create(const EngineOptions& options) {
  if (options.kind == EngineKind::kNaive) return std::make_unique<NaiveEngine>();
  int threads = options.cpu_threads > 0 ? options.cpu_threads : thread_budget();
  return std::make_unique<ThreadedEngine>(threads, options.sync_each_gpu_op);
}

Engine& Engine::get() {
  static const std::unique_ptr<Engine> engine = [] {
    const RuntimeConfig& config = runtime_config();
    EngineOptions options;
    options.kind = config.naive_engine ? EngineKind::kNaive : EngineKind::kThreaded;
    options.cpu_threads = config.cpu_workers;
    options.sync_each_gpu_op = config.gpu_sync;
    return create(options);
  }();
  return *engine;
}

void Engine::prefer_cpu_workers(int workers) {
  if (runtime_config().cpu_workers == 0) get().set_active_cpu_workers(workers);
}

}  // namespace mx
