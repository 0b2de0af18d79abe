// LeakyReLU's parameters (leaky_relu.cc), in a header so that code outside
// the operator's file reads them typed (OpInstance::params_as), as ONNX
// export does.
#pragma once

#include <map>
#include <string>

#include "base/error.h"
#include "base/param.h"
#include "op/nn/leaky_relu_kernels.h"

namespace mx::op {

struct LeakyReLUParam : Params<LeakyReLUParam> {
  LeakyType act_type = LeakyType::kLeaky;
  float slope = 0.25f;
  float lower_bound = 0.125f;
  float upper_bound = 0.334f;

  static void declare(ParamDecl<LeakyReLUParam>& d) {
    d.field("act_type", &LeakyReLUParam::act_type)
        .set_default(LeakyType::kLeaky)
        .add_enum("rrelu", LeakyType::kRRelu)
        .add_enum("leaky", LeakyType::kLeaky)
        .add_enum("prelu", LeakyType::kPRelu)
        .add_enum("elu", LeakyType::kElu)
        .add_enum("selu", LeakyType::kSelu)
        .add_enum("gelu", LeakyType::kGelu)
        .describe("Activation function ('rrelu' is not supported).");
    d.field("slope", &LeakyReLUParam::slope)
        .set_default(0.25f)
        .describe("Slope of the negative part for leaky and elu.");
    d.field("lower_bound", &LeakyReLUParam::lower_bound)
        .set_default(0.125f)
        .describe("Lower bound of the random slope of rrelu.");
    d.field("upper_bound", &LeakyReLUParam::upper_bound)
        .set_default(0.334f)
        .describe("Upper bound of the random slope of rrelu.");
  }

  static LeakyReLUParam from_strings(const std::map<std::string, std::string>& attrs,
                                     const std::string& owner) {
    LeakyReLUParam p = Params::from_strings(attrs, owner);
    if (p.act_type == LeakyType::kRRelu)
      throw InputError(owner +
                       ": act_type 'rrelu' (random slopes) is not supported; at inference it "
                       "equals act_type 'leaky' with slope (lower_bound + upper_bound) / 2");
    return p;
  }
};

}  // namespace mx::op
