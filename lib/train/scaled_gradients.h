// The gradients of a loss-scaled step (train/loss_scaler.h) on their way to
// the optimizer: checked for values that are not finite on every device of
// this worker (a dynamic scale), and divided by the scale, so that gradient
// clipping, optimizer.clip_gradient and the optimizer itself see the true
// gradient. With one device the optimizer divides them as it reads them
// (ParameterUpdates::divide_gradients_by); a store's gradients are divided
// here, in place.
#pragma once

#include <string>
#include <vector>

#include "executor/executor.h"

namespace mx::train {

// Whether every value of every executor's gradients of `params` is finite:
// one multi_all_finite per executor; waits for their backward passes.
bool gradients_finite(const std::vector<Executor*>& executors,
                      const std::vector<std::string>& params);

// Divides every executor's gradients of `params` by `scale` in place.
void divide_gradients(const std::vector<Executor*>& executors,
                      const std::vector<std::string>& params, double scale);

// Sets every executor's kLossScaleInput (loss_scale_graph.h) to `scale`.
void set_loss_scale_inputs(const std::vector<Executor*>& executors, double scale);

}  // namespace mx::train
