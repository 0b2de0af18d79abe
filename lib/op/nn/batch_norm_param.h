// BatchNorm's parameters (batch_norm.cc), in a header so that code outside
// the operator's file reads them typed (OpInstance::params_as), as ONNX
// export does.
#pragma once

#include <string>

#include "base/param.h"

namespace mx::op {

struct BatchNormParam : Params<BatchNormParam> {
  double eps = 1e-3;
  float momentum = 0.9f;
  bool fix_gamma = true;
  bool use_global_stats = false;
  bool output_mean_var = false;
  int axis = 1;
  bool cudnn_off = false;

  static void declare(ParamDecl<BatchNormParam>& d) {
    d.field("eps", &BatchNormParam::eps)
        .set_default(1e-3)
        .set_lower_bound(0.0)
        .describe("Added to the variance before taking its square root.");
    d.field("momentum", &BatchNormParam::momentum)
        .set_default(0.9f)
        .describe("Moving statistics: moving = moving * momentum + batch * (1 - momentum).");
    d.field("fix_gamma", &BatchNormParam::fix_gamma)
        .set_default(true)
        .describe("Use a scale of 1 instead of gamma (gamma gets a zero gradient).");
    d.field("use_global_stats", &BatchNormParam::use_global_stats)
        .set_default(false)
        .describe("Normalize with the moving statistics in training too (no update).");
    d.field("output_mean_var", &BatchNormParam::output_mean_var)
        .set_default(false)
        .describe("Also output the mean and the inverse standard deviation.");
    d.field("axis", &BatchNormParam::axis)
        .set_default(1)
        .describe("The channel axis (negative counts from the end).");
    d.field("cudnn_off", &BatchNormParam::cudnn_off)
        .set_default(false)
        .describe("Turn off cuDNN (accepted for compatibility; the CPU ignores it).");
  }
};

}  // namespace mx::op
