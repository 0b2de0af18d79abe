// How an operator takes part in mixed precision (train.precision bfloat16 or
// float16), declared with the operator (OpBuilder::amp) in the manner of
// MXNet's AMP lists (python/mxnet/contrib/amp/lists/symbol_bf16.py); the AMP
// graph pass (graph/amp_pass.h) inserts amp_cast / amp_multicast nodes by it.
#pragma once

namespace mx::op {

enum class AmpClass {
  kUnset,         // not declared (the registry refuses it at start-up)
  kLowPrecision,  // runs in the low precision: every float input is cast to it (MXNet's BF16_FUNCS)
  kFloat32,       // runs in float32: low-precision inputs are cast back (FP32_FUNCS)
  kFollow,        // runs in whatever type its inputs have (BF16_FP32_FUNCS)
  kWidest,        // its float inputs are cast to the widest of their types (WIDEST_TYPE_CASTS)
  // Runs in its data input's (the first input's) type; its parameters and
  // statistics stay float32, as MXNet's BatchNorm keeps them for float16 and
  // bfloat16 data. Only the first output follows the data.
  kFollowData,
};

// "low_precision", "float32", "follow", "widest", "follow_data"
// (docs/operators.md, mx-ops).
inline const char* amp_class_name(AmpClass c) {
  switch (c) {
    case AmpClass::kLowPrecision: return "low_precision";
    case AmpClass::kFloat32: return "float32";
    case AmpClass::kFollow: return "follow";
    case AmpClass::kWidest: return "widest";
    case AmpClass::kFollowData: return "follow_data";
    case AmpClass::kUnset: break;
  }
  return "unset";
}

}  // namespace mx::op
