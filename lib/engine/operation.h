// One pushed operation and the steps every engine takes with it.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/var.h"

namespace mx {

struct Operation {
  AsyncFn fn;
  Context ctx;
  std::vector<Var*> reads;
  std::vector<Var*> writes;
  FnProperty prop = FnProperty::kNormal;
  int priority = 0;
  std::string name;
  // False for the engine's own waiters: they run even when an input failed.
  bool skip_if_input_failed = true;
  // A host waiter after which the caller may write what it read: it also
  // waits for GPU reads still queued (stream_fence.h).
  bool waits_for_gpu_readers = false;
  // Set for the operation that deletes a variable; freed when it completes.
  std::unique_ptr<Var> var_to_delete;
  // Variables this operation still waits for, plus one while it is pushed.
  std::atomic<int> wait{0};
  uint64_t sequence = 0;  // push order, to keep FIFO among equal priorities
};

// Sorts and deduplicates the variable lists; a variable both read and written
// counts as written only.
void normalize_dependencies(std::vector<Var*>& reads, std::vector<Var*>& writes);

// The first stored exception among the variables `op` reads, if any.
std::exception_ptr failed_input(const Operation& op);

// Wraps an exception thrown by operation `name` so its message names the
// operation; keeps the exit code of mx errors.
std::exception_ptr name_exception(const std::string& name, std::exception_ptr error);

// Re-throws `error`; used by waiters.
[[noreturn]] void rethrow(std::exception_ptr error);

}  // namespace mx
