// Shape inference and parameter errors of one operator, for the operator
// tests that check inference from partial information and its messages.
#pragma once

#include <string>
#include <utility>

#include "base/error.h"
#include "op/invoke.h"

namespace mx::test {

// Runs shape inference of `op` on the given input (and output) shapes.
struct Inferred {
  op::ShapeVector in, out;
};
inline Inferred infer(const std::string& name, const op::AttrMap& attrs, op::ShapeVector in,
                      op::ShapeVector out = {}) {
  op::OpInstance op(name, attrs, "layer");
  if (out.empty()) out.resize(op.output_names().size());
  op::ShapeVector aux;
  op.infer_shape(in, aux, out);
  return {in, out};
}

inline Shape out_shape(const std::string& name, const op::AttrMap& attrs,
                       const op::ShapeVector& in) {
  return infer(name, attrs, in).out.at(0);
}

// The message of the InputError that inference of `op` throws.
inline std::string infer_error(const std::string& name, const op::AttrMap& attrs,
                               op::ShapeVector in, op::ShapeVector out = {}) {
  try {
    infer(name, attrs, std::move(in), std::move(out));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

// The message of the InputError that parsing `op`'s parameters throws.
inline std::string param_error(const std::string& name, const op::AttrMap& attrs) {
  try {
    op::OpInstance op(name, attrs, "layer");
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace mx::test
