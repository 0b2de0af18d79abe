// The backward pass of recorded imperative calls (MXNet's
// MXAutogradBackwardEx). It runs the executor's gradient pass, not one of
// its own:
//  1. The tape reachable from the heads becomes a graph::Symbol: each
//     recorded call an operator node, each marked variable an argument (with
//     its gradient buffer and grad_req), each array on no tape that a call
//     read an argument without gradient, each auxiliary state an auxiliary
//     variable. A variable used by several calls is one node, so its
//     gradients are summed as in any graph.
//  2. An Executor is bound to that symbol with Executor::bind_recorded: the
//     operators' outputs are the arrays the recorded calls made, so the
//     backward steps read the values the forward pass really produced.
//     Replaying the forward pass instead would draw new Dropout masks,
//     move BatchNorm's running statistics a second time and cost a second
//     forward pass; feeding the recorded values does none of that, and the
//     memory planner gives memory to the gradients only.
//  3. executor.backward(head_grads) pushes the backward steps to the engine,
//     so the gradient buffers are written (or added to, for grad_req add)
//     asynchronously like any NDArray operation.
// Without retain_graph the calls' recorded values are then dropped, and a
// second backward through them is refused.
#pragma once

#include <vector>

#include "autograd/tape.h"

namespace mx::autograd {

struct BackwardOptions {
  // One per head, or none; a none array (or no list) means ones.
  std::vector<NDArray> head_grads;
  bool retain_graph = false;
};

// Writes the gradients of the heads' sum (weighted by the head gradients)
// into the marked variables' gradient buffers.
void backward(const std::vector<Array>& heads, const BackwardOptions& options);

// The gradients of the heads with respect to `variables` (marked variables),
// as new arrays, leaving every gradient buffer as it is (MXNet's
// autograd.grad).
std::vector<NDArray> gradients(const std::vector<Array>& heads, const std::vector<Array>& variables,
                               const BackwardOptions& options);

}  // namespace mx::autograd
