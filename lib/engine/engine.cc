#include "engine/engine.h"

#include <cstdlib>
#include <cstring>

#include "base/error.h"
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

EngineKind parse_engine_kind(const std::string& name) {
  if (name == "naive" || name == "NaiveEngine") return EngineKind::kNaive;
  if (name == "threaded" || name == "ThreadedEngine" || name == "ThreadedEnginePerDevice")
    return EngineKind::kThreaded;
  throw InputError("unknown engine '" + name + "' (expected naive or threaded)");
}

std::unique_ptr<Engine> Engine::create(const EngineOptions& options) {
  if (options.kind == EngineKind::kNaive) return std::make_unique<NaiveEngine>();
  int threads = options.cpu_threads > 0 ? options.cpu_threads : thread_budget();
  return std::make_unique<ThreadedEngine>(threads, options.sync_each_gpu_op);
}

namespace {
const char* cpu_workers_from_environment() {
  const char* env = std::getenv("MX_CPU_WORKER_NTHREADS");
  return env != nullptr && *env != '\0' ? env : nullptr;
}
}  // namespace

Engine& Engine::get() {
  static const std::unique_ptr<Engine> engine = [] {
    EngineOptions options;
    if (const char* env = std::getenv("MX_ENGINE"); env != nullptr && *env != '\0')
      options.kind = parse_engine_kind(env);
    if (const char* env = cpu_workers_from_environment()) options.cpu_threads = std::atoi(env);
    if (const char* env = std::getenv("MX_GPU_SYNC"))
      options.sync_each_gpu_op = std::strcmp(env, "1") == 0;
    return create(options);
  }();
  return *engine;
}

void Engine::prefer_cpu_workers(int workers) {
  if (cpu_workers_from_environment() == nullptr) get().set_active_cpu_workers(workers);
}

}  // namespace mx
