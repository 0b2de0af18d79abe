// What autograd records (MXNet's AGInfo on nnvm nodes). There is no global
// tape: each recorded operator call is a TapeNode that points at the nodes
// that made its inputs, and arrays point at the node output they hold. A
// recorded graph therefore lives as long as an array of it does, threads
// record independently, and backward finds the graph by walking from its
// heads.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "graph/exec_plan.h"
#include "ndarray/ndarray.h"
#include "op/invoke.h"

namespace mx::autograd {

struct TapeNode;

// One output of a tape node.
struct TapeEntry {
  std::shared_ptr<TapeNode> node;
  uint32_t index = 0;
  explicit operator bool() const { return node != nullptr; }
};

// An NDArray as the imperative API holds it: its values and, when it is a
// marked variable or the result of a recorded operator call, its place on
// the tape (MXNet's NDArray::autograd_entry_).
struct Array {
  NDArray value;
  TapeEntry entry;  // empty: the array needs no gradient

  Array() = default;
  explicit Array(NDArray v, TapeEntry e = {}) : value(std::move(v)), entry(std::move(e)) {}
};

// A marked variable (no op) or a recorded operator call.
struct TapeNode {
  std::optional<op::OpInstance> op;
  // Per input (arguments, then auxiliary states): the entry that made it, or
  // empty for an array that is on no tape (a constant of the graph).
  std::vector<TapeEntry> inputs;
  std::vector<NDArray> input_values;
  // Every output as computed, hidden ones included (Dropout's mask,
  // BatchNorm's batch statistics); a variable's single output is its array.
  std::vector<NDArray> outputs;
  bool is_train = false;  // the mode the call ran in
  // A variable's gradient buffer and how backward writes it.
  NDArray grad;
  graph::GradReq grad_req = graph::GradReq::kNull;
  // A backward pass without retain_graph dropped this call's values.
  bool released = false;

  bool is_variable() const { return !op.has_value(); }
  // Drops the recorded values and the links to the inputs' nodes, so that
  // their memory can go.
  void release() {
    inputs.clear();
    input_values.clear();
    outputs.clear();
    released = true;
  }
};

}  // namespace mx::autograd
