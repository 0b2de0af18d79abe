// The naive engine (MX_ENGINE=naive): every operation runs inside push(), in
// the caller's thread, in push order. For debugging: a stack trace points at
// the code that pushed the failing operation. Failures are stored and
// re-thrown on wait exactly as in the threaded engine.
#pragma once

#include <mutex>
#include <vector>

#include "engine/engine.h"
#include "engine/operation.h"

namespace mx {

class NaiveEngine final : public Engine {
 public:
  NaiveEngine() = default;
  ~NaiveEngine() override;

  VarHandle new_var() override;
  void push_async(AsyncFn fn, Context ctx, std::vector<Var*> reads, std::vector<Var*> writes,
                  FnProperty prop, int priority, std::string name) override;
  void wait_for_var(Var* var) override;
  void wait_all() override;
  int64_t pending() const override { return 0; }
  void set_active_cpu_workers(int /*workers*/) override {}  // runs everything on the caller
  EngineKind kind() const override { return EngineKind::kNaive; }

 protected:
  void delete_var(std::unique_ptr<Var> var, std::function<void()> on_delete) override;

 private:
  void run(Operation& op);
  void* stream_for(Context ctx);

  // Serializes pushes from several threads; recursive so an operation may push.
  std::recursive_mutex mutex_;
  std::vector<std::exception_ptr> unreported_;
  std::vector<std::pair<int, void*>> gpu_streams_;  // device -> stream
};

}  // namespace mx
