// Notices a network output that is NaN or infinite without waiting for it
// (a check runs on the engine behind each batch's forward pass), and then
// says where it started: the batch's forward pass runs again with a monitor
// that finds the first layer whose output is not finite.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>

#include "executor/executor.h"

namespace mx::train {

class NonFiniteWatch {
 public:
  // Checks `output` (batch `batch_index` of the epoch) once it is computed.
  void watch(const NDArray& output, int64_t batch_index, Context ctx);
  // Throws Error naming the epoch, the first batch with a non-finite output
  // and the first layer whose output is not finite, once a check has seen
  // one. `exe` holds the batch still.
  void throw_if_seen(Executor& exe, int epoch) const;

 private:
  std::shared_ptr<std::atomic<int64_t>> first_bad_batch_ =
      std::make_shared<std::atomic<int64_t>>(-1);
};

}  // namespace mx::train
