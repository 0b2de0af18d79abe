// Recurrent states carried from one batch to the next (truncated
// backpropagation through time, and generation one token at a time). A
// network marks each such input with the attribute "__carry__" naming the
// network output whose values it takes after every forward pass (an RNN
// layer with `begin_state: carry`, recurrent_layer.h, makes both). The
// input is data, not a parameter: it has no gradient, is not initialized
// or learned, and starts each epoch (and each validation) at zero; the
// output is a BlockGrad, so no gradient flows into the previous batch.
#pragma once

#include <string>
#include <vector>

#include "executor/executor.h"
#include "graph/symbol.h"

namespace mx::train {

// The attribute of a carried input: the name of the output it takes.
inline constexpr const char* kCarryAttr = "__carry__";

class CarriedStates {
 public:
  CarriedStates() = default;
  // Finds the carried inputs of `network`; InputError when one names an
  // output the network does not have.
  explicit CarriedStates(const graph::Symbol& network);

  bool empty() const { return pairs_.empty(); }
  // The carried inputs' names (not parameters; bound without gradients).
  std::vector<std::string> inputs() const;
  // Sets every carried input of `exe` to zero.
  void reset(const Executor& exe) const;
  // Copies each carried output of `exe`'s last forward pass into its input
  // (an engine operation: nothing waits).
  void carry(const Executor& exe) const;

 private:
  struct Pair {
    std::string input;
    size_t output = 0;  // index among the network's outputs
  };
  std::vector<Pair> pairs_;
};

}  // namespace mx::train
