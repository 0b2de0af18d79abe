// Imperative operator calls as autograd sees them: each runs through
// op::invoke_forward (one engine operation, as every NDArray operation) in
// this thread's training mode, and while this thread records, a call with an
// input that needs a gradient (a marked variable or the result of a recorded
// call) is recorded as a TapeNode whose outputs then need gradients too.
// Operators without a gradient are not recorded: their outputs are constants.
#pragma once

#include <vector>

#include "autograd/tape.h"

namespace mx::autograd {

// Marks `variables` (MXNet's MXAutogradMarkVariables): their gradients go
// into grads[i] as reqs[i] says (null: none). A gradient buffer has its
// variable's shape, dtype and device. Marking again starts a new variable:
// graphs recorded before keep the old one.
void mark_variables(const std::vector<Array*>& variables, const std::vector<NDArray>& grads,
                    const std::vector<graph::GradReq>& reqs);

// Runs `op` on `inputs` (its arguments, then its auxiliary states).
// `outputs`: the arrays the visible outputs go into (shapes and dtypes as
// the operator infers them), or empty to allocate them. Returns the visible
// outputs with their tape entries. While recording, an output array that is
// itself on the tape is refused (writing it would change what the recorded
// graph read).
std::vector<Array> invoke(const op::OpInstance& op, const std::vector<Array>& inputs,
                          const std::vector<Array>& outputs = {});

}  // namespace mx::autograd
