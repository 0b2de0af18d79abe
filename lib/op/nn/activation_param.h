// Activation's parameters (activation.cc), in a header so that code outside
// the operator's file reads them typed (OpInstance::params_as), as ONNX export does.
#pragma once

#include <string>

#include "base/param.h"
#include "op/nn/activation_table.h"

namespace mx::op {

struct ActivationParam : Params<ActivationParam> {
  ActType act_type = ActType::kRelu;
  static void declare(ParamDecl<ActivationParam>& d) {
    auto field = d.field("act_type", &ActivationParam::act_type);
    for (const ActivationKind& kind : kActivationKinds) field.add_enum(kind.name, kind.type);
    field.describe("Activation function to apply.");
  }
};

}  // namespace mx::op
