// The gradients of a loss-scaled step (train/loss_scaler.h) on their way to
// the optimizer: divided by the scale in place, so that gradient clipping,
// optimizer.clip_gradient and the optimizer itself see the true gradient,
// and, for a dynamic scale, checked for values that are not finite on every
// device of this worker.
#pragma once

#include <string>
#include <vector>

#include "executor/executor.h"

namespace mx::train {

// Divides every executor's gradients of `params` by `scale` (as the float32
// the graph multiplied by). With `check`, waits for them and returns whether
// every value is finite; without, returns true and waits for nothing.
bool unscale_gradients(const std::vector<Executor*>& executors,
                       const std::vector<std::string>& params, double scale, bool check);

// Sets every executor's kLossScaleInput (loss_scale_graph.h) to `scale`.
void set_loss_scale_inputs(const std::vector<Executor*>& executors, double scale);

}  // namespace mx::train
