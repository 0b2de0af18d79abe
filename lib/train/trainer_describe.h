// mx-train --dry-run and --benchmark: what the network is and what it costs.
#pragma once

#include <iosfwd>
#include <set>
#include <string>

#include "executor/executor.h"
#include "graph/symbol.h"

namespace mx::train {

// The network and the input shapes it is bound with.
struct DescribeInput {
  const graph::Symbol* symbol;
  graph::ShapeMap shapes;
  std::set<std::string> inputs;  // data and label: not parameters
  BindOptions bind;
};

// The layer table (output shapes, parameters, FLOPs), the totals and the
// planned memory for training and inference, as text or JSON.
void describe_network(std::ostream& out, bool json, const DescribeInput& d);
// Forward and backward milliseconds per layer, the mean of `iterations`
// runs after one warm-up run.
void benchmark_network(std::ostream& out, int iterations, const DescribeInput& d);

}  // namespace mx::train
