#include "capi/op_info.h"

#include "op/listing.h"

namespace mx::capi {

ArgInfo param_arg_info(const ParamFieldInfo& field) {
  ArgInfo a;
  a.name = field.name;
  a.type = field.required ? field.type + ", required"
                          : field.type + ", optional, default=" + field.default_text;
  a.description = field.description;
  return a;
}

OpInfo op_info(const op::OpDef& def) {
  OpInfo info;
  info.name = def.name;
  info.description = def.description;
  constexpr const char* kInput = "NDArray-or-Symbol";
  bool variadic = false;
  for (const auto& p : def.param_infos) variadic = variadic || p.name == "num_args";
  if (variadic) {
    // Concat, ElementWiseSum: any number of inputs, counted by num_args.
    info.key_var_num_args = "num_args";
    info.args.push_back({"data", std::string(kInput) + "[]", "the inputs"});
  } else {
    const op::OpSignature s = op::op_signature(def);
    for (const auto& name : s.inputs) info.args.push_back({name, kInput, "input " + name});
    for (const auto& name : s.aux)
      info.args.push_back({name, kInput, "auxiliary state " + name + " (updated in training)"});
  }
  for (const auto& p : def.param_infos) info.args.push_back(param_arg_info(p));
  return info;
}

}  // namespace mx::capi
