// Activation's kinds in one table: MXNet's act_type spelling, the ONNX
// operator that computes the same function, whether a fused inference layer
// can apply it (oneDNN has the function as an eltwise post-op) and whether
// its values are never negative.
// Everything that names an activation kind reads it here: the operator's
// parameter (activation.cc), the fused inference layers (inference_layer.h,
// the oneDNN graph's algorithm), ONNX export and import. Adding a kind is
// one enum value and one row; the static_assert below catches a row missing
// or out of order, and test_nn_kernels_host checks every row's function.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace mx::op {

enum class ActType { kRelu, kSigmoid, kTanh, kSoftRelu, kSoftSign };

struct ActivationKind {
  ActType type;
  const char* name;     // MXNet's act_type value
  const char* onnx_op;  // the ONNX operator of the same function
  bool fusable;         // runs inside a fused inference layer (a oneDNN eltwise post-op)
  bool nonnegative;     // gives no negative value (int8: its output quantizes unsigned)
};

inline constexpr ActivationKind kActivationKinds[] = {
    {ActType::kRelu, "relu", "Relu", true, true},
    {ActType::kSigmoid, "sigmoid", "Sigmoid", true, true},
    {ActType::kTanh, "tanh", "Tanh", true, false},
    {ActType::kSoftRelu, "softrelu", "Softplus", true, true},
    {ActType::kSoftSign, "softsign", "Softsign", false, false},  // no oneDNN eltwise algorithm
};

// Row k describes ActType k, for every kind.
constexpr bool activation_rows_in_order() {
  std::size_t k = 0;
  for (const auto& row : kActivationKinds)
    if (static_cast<std::size_t>(row.type) != k++) return false;
  return k == static_cast<std::size_t>(ActType::kSoftSign) + 1;
}
static_assert(activation_rows_in_order(), "kActivationKinds: one row per ActType, in enum order");

constexpr const ActivationKind& activation_kind(ActType t) {
  return kActivationKinds[static_cast<std::size_t>(t)];
}

// The kind spelt `name` in MXNet's act_type, if any.
inline std::optional<ActType> activation_by_name(std::string_view name) {
  for (const auto& row : kActivationKinds)
    if (name == row.name) return row.type;
  return std::nullopt;
}

}  // namespace mx::op
