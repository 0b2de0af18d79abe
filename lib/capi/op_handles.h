// Operator handles (AtomicSymbolCreator, OpHandle): shared by the imperative
// and the symbolic functions of the C API.
#pragma once

#include <map>
#include <string>

#include "op/op_def.h"

namespace mx::capi {

// The operator behind a handle; InputError for NULL or a pointer that is
// not one of the registry's operators.
const op::OpDef& op_of(const void* creator);

// MXNet sets the parameter that counts a variable number of inputs
// (Concat's num_args) from the inputs given, unless it is given.
void add_num_args(const op::OpDef& def, size_t num_inputs,
                  std::map<std::string, std::string>& params);

}  // namespace mx::capi
