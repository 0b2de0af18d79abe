// FullyConnected's parameters (fully_connected.cc), in a header so that code
// outside the operator's file reads them typed (OpInstance::params_as), as
// ONNX export does.
#pragma once

#include <string>

#include "base/param.h"

namespace mx::op {

struct FullyConnectedParam : Params<FullyConnectedParam> {
  int num_hidden = 0;
  bool no_bias = false;
  bool flatten = true;
  static void declare(ParamDecl<FullyConnectedParam>& d) {
    d.field("num_hidden", &FullyConnectedParam::num_hidden)
        .set_lower_bound(1)
        .describe("Number of hidden units (output features).");
    d.field("no_bias", &FullyConnectedParam::no_bias)
        .set_default(false)
        .describe("Disable the bias.");
    d.field("flatten", &FullyConnectedParam::flatten)
        .set_default(true)
        .describe("Flatten all but the first axis of the input (else apply to the last axis).");
  }
};

}  // namespace mx::op
