// Helpers shared by the import rules (internal to lib/onnx): attribute
// strings in the registry's syntax, constant inputs, axes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx/import_ops.h"

namespace mx::onnx {

// "(1, 2)", "(3,)": a tuple parameter.
std::string tuple(const std::vector<int64_t>& v);
// A float parameter printed exactly.
std::string number(double v);
const char* boolean(bool v);
// The values of a constant integer tensor (shapes, axes) or its first value.
std::vector<int64_t> int_values(const NDArray& a);
double scalar_value(const NDArray& a);
// Input k of `n`, which must be a constant (initializer, Constant or fixed
// input); throws UnsupportedModel naming `what` otherwise.
const NDArray& need_constant(ImportContext& c, const ImportNode& n, int k, const char* what);
// `axis` in [0, rank); throws UnsupportedModel when out of range.
int64_t positive(int64_t axis, int rank);
// MXNet's Reshape with its special codes (0 copies, -1 infers, ...).
graph::Symbol reshape(ImportContext& c, const std::string& name, const std::vector<int64_t>& codes,
                      const graph::Symbol& in);

}  // namespace mx::onnx
