// Running operators imperatively on NDArrays (the paper's NDArray interface):
// each call infers the output shapes, allocates outputs and pushes one engine
// operation that reads the inputs and writes the outputs. Optimizers, metrics
// and tests use this; the executor runs the same kernels on planned memory.
#pragma once

#include <string>
#include <typeinfo>
#include <vector>

#include "ndarray/ndarray.h"
#include "op/op_def.h"

namespace mx::op {

// An operator with parsed parameters.
class OpInstance {
 public:
  // Throws InputError for an unknown operator or bad parameters; `owner`
  // names the layer in messages (default: the operator's name).
  OpInstance(const std::string& op, const AttrMap& attrs, const std::string& owner = "");
  // An operator made by a graph pass rather than found in the registry (a
  // fused inference graph): `def` must outlive every instance.
  OpInstance(const OpDef& def, ParamsPtr params, std::string owner)
      : def_(&def), params_(std::move(params)), owner_(std::move(owner)) {}

  const OpDef& def() const { return *def_; }
  const ParamsPtr& params() const { return params_; }
  const std::string& owner() const { return owner_; }
  std::vector<std::string> input_names() const { return def_->input_names(params_); }
  std::vector<std::string> aux_names() const { return def_->aux_names(params_); }
  std::vector<std::string> output_names() const { return def_->output_names(params_); }
  int num_visible_outputs() const { return def_->num_visible_outputs(params_); }
  AttrMap attrs() const { return def_->print(params_); }
  // The parsed parameters as the operator's Params struct P (declared in a
  // header, e.g. op/nn/fully_connected_param.h), so that code outside the
  // operator's file (ONNX export) reads typed fields rather than printed
  // strings. Throws Error when P is not the operator's struct.
  template <typename P>
  const P& params_as() const {
    if (def_->param_type == nullptr || *def_->param_type != typeid(P))
      throw Error(owner_ + ": the parameters of " + def_->name + " are not a " + typeid(P).name());
    return *static_cast<const P*>(params_.get());
  }

  // Shape/type inference with the owner named in errors.
  void infer_shape(ShapeVector& in, ShapeVector& aux, ShapeVector& out) const;
  void infer_type(DTypeVector& in, DTypeVector& aux, DTypeVector& out) const;

 private:
  const OpDef* def_;
  ParamsPtr params_;
  std::string owner_;
};

// Every output's shape and type from the inputs' (InputError naming the
// operator when they cannot be inferred or do not fit).
struct OutputSpec {
  Shape shape;
  DType dtype = DType::kFloat32;
};
std::vector<OutputSpec> infer_outputs(const OpInstance& op, const std::vector<NDArray>& inputs,
                                      const std::vector<NDArray>& aux);

// Forward: returns every output (hidden ones included, visible first).
std::vector<NDArray> invoke(const OpInstance& op, const std::vector<NDArray>& inputs,
                            const std::vector<NDArray>& aux = {}, bool is_train = false);
std::vector<NDArray> invoke(const std::string& op, const std::vector<NDArray>& inputs,
                            const AttrMap& attrs = {}, const std::vector<NDArray>& aux = {},
                            bool is_train = false);

// Forward into given outputs with a request per output.
void invoke_forward(const OpInstance& op, const std::vector<NDArray>& inputs,
                    const std::vector<NDArray>& aux, const std::vector<NDArray>& outputs,
                    const std::vector<OpReq>& req, bool is_train);

// Backward into given input gradients with a request per input.
void invoke_backward(const OpInstance& op, const std::vector<NDArray>& out_grads,
                     const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                     const std::vector<NDArray>& aux, const std::vector<NDArray>& in_grads,
                     const std::vector<OpReq>& req);

}  // namespace mx::op
