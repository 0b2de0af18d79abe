// What a front end needs to know about an operator or a data iterator to
// generate a function for it (MXNet's MXSymbolGetAtomicSymbolInfo and
// MXDataIterGetIterInfo): its arguments in MXNet's layout, built from the
// registry (the parameter structs' names, types, defaults, descriptions).
#pragma once

#include <string>
#include <vector>

#include "base/param.h"
#include "op/op_def.h"

namespace mx::capi {

struct ArgInfo {
  std::string name;
  // "NDArray-or-Symbol" (an input; "[]" after it for a variable number),
  // or a parameter's "TYPE, required" / "TYPE, optional, default=VALUE".
  std::string type;
  std::string description;
};

struct OpInfo {
  std::string name, description;
  std::vector<ArgInfo> args;     // inputs, auxiliary states, then parameters
  std::string key_var_num_args;  // "num_args" for a variable number of inputs
};

OpInfo op_info(const op::OpDef& def);
// A parameter as MXNet's type string describes it.
ArgInfo param_arg_info(const ParamFieldInfo& field);

}  // namespace mx::capi
