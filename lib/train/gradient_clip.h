// optimizer.clip_global_norm: before each update, the gradients are scaled
// by min(1, max_norm / ||g||), ||g|| the L2 norm over every parameter of the
// batch's gradient as the optimizer sees it (summed over the devices,
// times rescale_grad), so the step's direction is kept and its length
// bounded (Gluon's clip_global_norm, applied where the sum is known). Every
// computation is an engine operation on the gradients' devices: nothing
// waits here.
#pragma once

#include <string>
#include <vector>

#include "executor/executor.h"

namespace mx::train {

// Scales every executor's gradients of `params` in place.
void clip_global_norm(const std::vector<Executor*>& executors,
                      const std::vector<std::string>& params, double max_norm, double rescale);

}  // namespace mx::train
