#include "train/carried_states.h"

#include <algorithm>

#include "base/error.h"
#include "base/strings.h"

namespace mx::train {

CarriedStates::CarriedStates(const graph::Symbol& network) {
  const std::vector<std::string> outputs = network.list_outputs();
  const graph::Symbol internals = network.get_internals();
  for (const auto& name : network.list_arguments()) {
    const std::optional<std::string> from = internals[name].attr(kCarryAttr);
    if (!from) continue;
    const auto it = std::find(outputs.begin(), outputs.end(), *from);
    if (it == outputs.end())
      throw InputError(str("input '", name, "' carries the network output '", *from,
                           "', which the network does not have (its outputs: ", join(outputs, ", "),
                           ")"));
    pairs_.push_back({name, static_cast<size_t>(it - outputs.begin())});
  }
}

std::vector<std::string> CarriedStates::inputs() const {
  std::vector<std::string> names;
  for (const auto& p : pairs_) names.push_back(p.input);
  return names;
}

void CarriedStates::reset(const Executor& exe) const {
  for (const auto& p : pairs_) {
    NDArray input = exe.arg_dict().at(p.input);
    input.fill(0.0);
  }
}

void CarriedStates::carry(const Executor& exe) const {
  for (const auto& p : pairs_) {
    NDArray input = exe.arg_dict().at(p.input);
    const NDArray& output = exe.outputs().at(p.output);
    if (output.shape() != input.shape())
      throw InputError(str("the carried state '", p.input, "' is ", input.shape().to_string(),
                           " but the output it takes is ", output.shape().to_string()));
    output.copy_to(input);
  }
}

}  // namespace mx::train
