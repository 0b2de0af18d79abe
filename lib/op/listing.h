// Human- and machine-readable listings of the registry: what `mx-ops`
// prints and what docs/operators.md is generated from.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "op/op_def.h"

namespace mx::op {

enum class ListingFormat { kText, kMarkdown, kJson };

// An operator's inputs, auxiliary states and visible outputs. They may
// depend on parameters (no_bias, num_args, ...): these are the defaults',
// with required values filled by a plausible example; inputs is
// {"(depends on parameters)"} when even that cannot be evaluated.
struct OpSignature {
  std::vector<std::string> inputs, aux, outputs;
};
OpSignature op_signature(const OpDef& def);

// Every operator (or only `name`, throwing InputError when unknown).
void print_operators(std::ostream& out, ListingFormat format, const std::string& name = "");

}  // namespace mx::op
