// The dependency engine (MXNet paper, section 3.2). Every resource that an
// operation touches — an array's memory, an RNG, temp space, a KVStore key —
// has an engine variable. An operation is pushed with the variables it reads
// and those it writes and runs as soon as its dependencies allow: readers of
// a variable run concurrently, writers run alone and in push order. Push
// returns at once; wait_for_var / wait_all block until results exist.
//
// An exception thrown inside an operation is stored on the variables it
// writes (and passed on to operations that read them) and re-thrown, naming
// the operation, to whoever waits on those variables. The engine stays usable.
#pragma once

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/context.h"

namespace mx {

class Engine;
class Var;

// Passed to every operation: where it runs. On a GPU `stream` is the
// cudaStream_t of the worker that runs it. The operation queues its work on
// that stream and returns; the engine counts it finished then and makes
// operations on other streams or on the host wait for that work
// (stream_fence.h). An operation that runs work on a stream of its own
// (NCCL) synchronizes `stream` first and its own stream before it returns.
struct RunContext {
  Context ctx;
  void* stream = nullptr;
};

// Which worker of a device runs an operation. On a GPU, kCopy operations go
// to the copy stream so transfers overlap compute. On the CPU both are the same.
enum class FnProperty { kNormal, kCopy };

// An asynchronous operation calls this exactly once when it has finished,
// possibly from another thread, with the exception it failed with (if any).
class OnComplete {
 public:
  OnComplete() = default;
  explicit OnComplete(std::function<void(std::exception_ptr)> fn) : fn_(std::move(fn)) {}
  void operator()(std::exception_ptr error = nullptr) const { fn_(std::move(error)); }

 private:
  std::function<void(std::exception_ptr)> fn_;
};

using SyncFn = std::function<void(RunContext)>;
using AsyncFn = std::function<void(RunContext, OnComplete)>;

// Owns one engine variable. Dropping it deletes the variable once every
// operation pushed on it so far has finished (the caller does not wait).
class VarHandle {
 public:
  VarHandle() = default;
  VarHandle(Engine* engine, std::unique_ptr<Var> var);
  VarHandle(VarHandle&&) noexcept;
  VarHandle& operator=(VarHandle&&) noexcept;
  VarHandle(const VarHandle&) = delete;
  VarHandle& operator=(const VarHandle&) = delete;
  ~VarHandle();

  Var* get() const { return var_.get(); }
  explicit operator bool() const { return var_ != nullptr; }
  // Deletes the variable after its pending operations; `on_delete` runs
  // then (e.g. to free the memory the variable guarded).
  void release(std::function<void()> on_delete = {});

 private:
  Engine* engine_ = nullptr;
  std::unique_ptr<Var> var_;
};

enum class EngineKind { kNaive, kThreaded };

struct EngineOptions {
  EngineKind kind = EngineKind::kThreaded;
  int cpu_threads = 0;  // CPU workers; 0 = the thread budget (cores, or MX_NUM_THREADS)
  // Each GPU operation waits for its stream before it counts as finished
  // (MX_GPU_SYNC=1): slower, but an asynchronous CUDA error names the
  // operation that caused it.
  bool sync_each_gpu_op = false;
};

class Engine {
 public:
  virtual ~Engine() = default;

  // The process-wide engine, created on first use from the runtime
  // configuration (base/runtime_config.h): MX_ENGINE=naive selects the
  // synchronous engine, MX_ENGINE=threaded (the default) the threaded one;
  // MX_CPU_WORKER_NTHREADS sets its CPU workers and MX_GPU_SYNC=1
  // EngineOptions::sync_each_gpu_op.
  static Engine& get();
  static std::unique_ptr<Engine> create(const EngineOptions& options);

  virtual VarHandle new_var() = 0;

  // Pushes an operation. A variable listed in both `reads` and `writes`
  // counts as written; duplicates are ignored. Higher priority runs first
  // among operations that are ready at the same time.
  virtual void push_async(AsyncFn fn, Context ctx, std::vector<Var*> reads,
                          std::vector<Var*> writes, FnProperty prop = FnProperty::kNormal,
                          int priority = 0, std::string name = "") = 0;
  void push(SyncFn fn, Context ctx, std::vector<Var*> reads, std::vector<Var*> writes,
            FnProperty prop = FnProperty::kNormal, int priority = 0, std::string name = "");

  // Blocks until every operation pushed so far that writes `var` has run;
  // re-throws the stored exception if the last of them (or one it read) failed.
  virtual void wait_for_var(Var* var) = 0;
  // Blocks until every pushed operation has run; re-throws the first
  // exception no wait_for_var has reported yet.
  virtual void wait_all() = 0;

  // Number of operations pushed and not yet finished.
  virtual int64_t pending() const = 0;
  // The CPU workers that take operations: the first `workers` of the pool
  // (1 to its size); the others wait until let back in. Inference, one
  // operation after another each over the whole thread budget, gains
  // nothing from a second worker and loses OpenMP's warm threads: each
  // worker that calls oneDNN owns an OpenMP team, and once libgomp manages
  // more threads than there are cores it stops spinning between parallel
  // regions, so every primitive pays a futex wake-up (docs/benchmarks.md,
  // "Engine workers").
  virtual void set_active_cpu_workers(int workers) = 0;
  // set_active_cpu_workers on the process-wide engine, unless
  // MX_CPU_WORKER_NTHREADS chose the number of workers. A program's choice
  // (train/process_threads.h), made before it builds what runs.
  static void prefer_cpu_workers(int workers);
  virtual EngineKind kind() const = 0;

 protected:
  friend class VarHandle;
  // Deletes `var` after the operations pushed on it so far.
  virtual void delete_var(std::unique_ptr<Var> var, std::function<void()> on_delete) = 0;
};

}  // namespace mx
