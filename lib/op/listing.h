// Human- and machine-readable listings of the registry: what `mx-ops`
// prints and what docs/operators.md is generated from.
#pragma once

#include <ostream>
#include <string>

#include "op/op_def.h"

namespace mx::op {

enum class ListingFormat { kText, kMarkdown, kJson };

// Every operator (or only `name`, throwing InputError when unknown).
void print_operators(std::ostream& out, ListingFormat format, const std::string& name = "");

}  // namespace mx::op
