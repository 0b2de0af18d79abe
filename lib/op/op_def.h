// The definition of one operator: its MXNet name, parameters, inputs,
// outputs and auxiliary states, shape and type inference, in-place options,
// resources, kernels per device and its gradient. Each operator is declared
// once, in one file of its family (nn/, tensor/), with OpBuilder; the
// registry (registry.h) is the single source for every listing.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <typeinfo>
#include <utility>
#include <vector>

#include "base/param.h"
#include "engine/engine.h"
#include "op/amp_class.h"
#include "op/inference_layer.h"
#include "op/resources.h"
#include "op/tensor_ref.h"

namespace mx::op {

using AttrMap = std::map<std::string, std::string>;
using ShapeVector = std::vector<Shape>;
// An unknown dtype is std::nullopt during inference.
using DTypeVector = std::vector<std::optional<DType>>;
// Parsed parameters; the OpDef that made them knows their type.
using ParamsPtr = std::shared_ptr<const void>;

// Everything a forward kernel gets.
struct ForwardCall {
  bool is_train = false;
  RunContext rctx;
  OpResources resources;
  std::vector<TensorRef> inputs;   // in input_names order
  std::vector<TensorRef> aux;      // auxiliary states; updated in training (BatchNorm)
  std::vector<TensorRef> outputs;  // all outputs, visible ones first
  std::vector<OpReq> req;          // per output
};

// Everything a backward kernel gets: the gradients of the outputs and the
// forward data, and where to put the gradients of the inputs.
struct BackwardCall {
  bool is_train = true;
  RunContext rctx;
  OpResources resources;
  std::vector<TensorRef> out_grads;  // per visible output (ignored by loss operators)
  std::vector<TensorRef> inputs;
  std::vector<TensorRef> outputs;  // all outputs, hidden ones (masks, saved statistics) included
  std::vector<TensorRef> aux;
  std::vector<TensorRef> in_grads;  // per input
  std::vector<OpReq> req;           // per input gradient
};

using mx::DeviceKind;  // base/context.h

// Elements of `shape`, 0 when it is not fully known (a FLOP count of a
// partly inferred graph counts what it can).
inline double known_elements(const Shape& shape) {
  return shape.is_known() ? static_cast<double>(shape.size()) : 0.0;
}

struct OpDef {
  std::string name;
  std::vector<std::string> aliases;
  std::string description;
  std::vector<ParamFieldInfo> param_infos;
  // The C++ type of the parsed parameters (the OpBuilder's P), for typed
  // reads outside the operator's file (OpInstance::params_as).
  const std::type_info* param_type = nullptr;

  std::function<ParamsPtr(const AttrMap&, const std::string& owner)> parse;
  std::function<AttrMap(const ParamsPtr&)> print;
  std::function<std::vector<std::string>(const ParamsPtr&)> input_names;
  std::function<std::vector<std::string>(const ParamsPtr&)> aux_names;
  std::function<std::vector<std::string>(const ParamsPtr&)> output_names;
  std::function<int(const ParamsPtr&)> num_visible_outputs;
  // Fill unknown shapes/dtypes from known ones, in both directions; throw
  // InputError on a conflict.
  std::function<void(const ParamsPtr&, ShapeVector& in, ShapeVector& aux, ShapeVector& out)>
      infer_shape;
  std::function<void(const ParamsPtr&, DTypeVector& in, DTypeVector& aux, DTypeVector& out)>
      infer_type;
  // (input, output) pairs: the output may take the input's buffer when the
  // input dies at this node.
  std::vector<std::pair<int, int>> inplace;
  std::vector<ResourceKind> resources;
  std::function<void(const ParamsPtr&, const ForwardCall&)> forward[2];
  std::function<void(const ParamsPtr&, const BackwardCall&)> backward[2];
  // Loss operators compute their gradient from their inputs and ignore the
  // gradient of their output (SoftmaxOutput and the regression outputs).
  bool is_loss = false;
  // Which forward values the backward kernel reads (memory planning frees
  // the others early).
  bool backward_uses_inputs = true;
  bool backward_uses_outputs = true;
  // Outputs the backward kernel never reads even when it reads others
  // (BatchNorm and Dropout read their saved statistics or mask, not output 0).
  std::vector<int> backward_ignores_outputs;
  // The gradient of input 0 may be written over the gradient of output 0
  // (element-wise backward kernels, which read each element before writing it).
  bool backward_inplace = false;
  // The gradient of every input is zero whatever the output's (BlockGrad,
  // zeros_like, _contrib_arange_like): no gradient flows through the node,
  // so the planner leaves out its backward pass and everything before it
  // that only it would feed.
  bool stops_gradient = false;
  // Costly to recompute (the GEMM operators): the "cheap" mirroring policy
  // keeps their outputs instead of recomputing them in the backward pass.
  bool expensive = false;
  // Floating-point operations of one forward pass (a multiply-add counts 2)
  // from the parameters and the input and output shapes; unset: one per
  // element of output 0. Read through forward_flops().
  std::function<double(const ParamsPtr&, const ShapeVector& in, const ShapeVector& out)> flops;
  // The node's forward pass in inference as a layer of a fused CPU inference
  // graph (op/inference_layer.h), from the parameters and the known input
  // and output shapes; unset or nullopt: the node is not fused.
  std::function<std::optional<InferenceLayer>(const ParamsPtr&, const ShapeVector& in,
                                              const ShapeVector& out)>
      inference_layer;

  // Its part in mixed precision (op/amp_class.h), from its parameters (MXNet
  // keeps Activation's softrelu in float32); every operator declares one.
  std::function<AmpClass(const ParamsPtr&)> amp_class;
  // Where a network trained on the CPU needs another class (the operator's
  // 16-bit CPU kernels slower than its float32 ones): that class there.
  std::optional<AmpClass> amp_class_on_cpu;
  std::string amp_text;  // the class as the listings print it

  double forward_flops(const ParamsPtr& params, const ShapeVector& in,
                       const ShapeVector& out) const {
    if (flops) return flops(params, in, out);
    return out.empty() ? 0.0 : known_elements(out[0]);
  }
  bool has_backward() const { return static_cast<bool>(backward[0]); }
  bool has_kernel(DeviceKind device) const {
    return static_cast<bool>(forward[static_cast<int>(device)]);
  }
};

// Declares an operator whose parameters are the Params struct P.
template <typename P>
class OpBuilder {
 public:
  explicit OpBuilder(OpDef& def) : def_(def) {
    def_.param_infos = P::field_infos();
    def_.param_type = &typeid(P);
    def_.parse = [](const AttrMap& attrs, const std::string& owner) -> ParamsPtr {
      return std::make_shared<const P>(P::from_strings(attrs, owner));
    };
    def_.print = [](const ParamsPtr& p) { return cast(p).to_strings(); };
    def_.aux_names = [](const ParamsPtr&) { return std::vector<std::string>{}; };
    def_.output_names = [](const ParamsPtr&) { return std::vector<std::string>{"output"}; };
    def_.num_visible_outputs = [this_def = &def_](const ParamsPtr& p) {
      return static_cast<int>(this_def->output_names(p).size());
    };
    def_.infer_type = same_type;
  }

  static const P& cast(const ParamsPtr& p) { return *static_cast<const P*>(p.get()); }

  OpBuilder& describe(const std::string& text) {
    def_.description = text;
    return *this;
  }
  OpBuilder& alias(const std::string& name) {
    def_.aliases.push_back(name);
    return *this;
  }
  OpBuilder& inputs(std::vector<std::string> names) {
    def_.input_names = [names](const ParamsPtr&) { return names; };
    return *this;
  }
  OpBuilder& inputs(std::function<std::vector<std::string>(const P&)> fn) {
    def_.input_names = [fn](const ParamsPtr& p) { return fn(cast(p)); };
    return *this;
  }
  OpBuilder& aux(std::vector<std::string> names) {
    def_.aux_names = [names](const ParamsPtr&) { return names; };
    return *this;
  }
  OpBuilder& outputs(std::vector<std::string> names) {
    def_.output_names = [names](const ParamsPtr&) { return names; };
    return *this;
  }
  OpBuilder& outputs(std::function<std::vector<std::string>(const P&)> fn) {
    def_.output_names = [fn](const ParamsPtr& p) { return fn(cast(p)); };
    return *this;
  }
  OpBuilder& visible_outputs(std::function<int(const P&)> fn) {
    def_.num_visible_outputs = [fn](const ParamsPtr& p) { return fn(cast(p)); };
    return *this;
  }
  OpBuilder& infer_shape(
      std::function<void(const P&, ShapeVector&, ShapeVector&, ShapeVector&)> fn) {
    def_.infer_shape = [fn](const ParamsPtr& p, ShapeVector& in, ShapeVector& aux,
                            ShapeVector& out) { fn(cast(p), in, aux, out); };
    return *this;
  }
  OpBuilder& infer_type(
      std::function<void(const P&, DTypeVector&, DTypeVector&, DTypeVector&)> fn) {
    def_.infer_type = [fn](const ParamsPtr& p, DTypeVector& in, DTypeVector& aux,
                           DTypeVector& out) { fn(cast(p), in, aux, out); };
    return *this;
  }
  OpBuilder& inplace(std::vector<std::pair<int, int>> pairs) {
    def_.inplace = std::move(pairs);
    return *this;
  }
  OpBuilder& resource(ResourceKind kind) {
    def_.resources.push_back(kind);
    return *this;
  }
  OpBuilder& forward(DeviceKind device, std::function<void(const P&, const ForwardCall&)> fn) {
    def_.forward[static_cast<int>(device)] = [fn](const ParamsPtr& p, const ForwardCall& c) {
      fn(cast(p), c);
    };
    return *this;
  }
  OpBuilder& backward(DeviceKind device, std::function<void(const P&, const BackwardCall&)> fn) {
    def_.backward[static_cast<int>(device)] = [fn](const ParamsPtr& p, const BackwardCall& c) {
      fn(cast(p), c);
    };
    return *this;
  }
  OpBuilder& forward_cpu(std::function<void(const P&, const ForwardCall&)> fn) {
    return forward(DeviceKind::kCPU, std::move(fn));
  }
  OpBuilder& backward_cpu(std::function<void(const P&, const BackwardCall&)> fn) {
    return backward(DeviceKind::kCPU, std::move(fn));
  }
  OpBuilder& loss() {
    def_.is_loss = true;
    return *this;
  }
  OpBuilder& backward_uses(bool inputs, bool outputs) {
    def_.backward_uses_inputs = inputs;
    def_.backward_uses_outputs = outputs;
    return *this;
  }
  OpBuilder& backward_ignores_outputs(std::vector<int> outputs) {
    def_.backward_ignores_outputs = std::move(outputs);
    return *this;
  }
  OpBuilder& backward_inplace() {
    def_.backward_inplace = true;
    return *this;
  }
  OpBuilder& stops_gradient() {
    def_.stops_gradient = true;
    return *this;
  }
  OpBuilder& expensive() {
    def_.expensive = true;
    return *this;
  }
  OpBuilder& amp(AmpClass c) {
    def_.amp_class = [c](const ParamsPtr&) { return c; };
    def_.amp_text = amp_class_name(c);
    return *this;
  }
  // A class that depends on the parameters; `text` says how, for the listings.
  OpBuilder& amp(std::function<AmpClass(const P&)> fn, std::string text) {
    def_.amp_class = [fn](const ParamsPtr& p) { return fn(cast(p)); };
    def_.amp_text = std::move(text);
    return *this;
  }
  // The class for networks that train on the CPU, where it differs (after amp()).
  OpBuilder& amp_on_cpu(AmpClass c) {
    def_.amp_class_on_cpu = c;
    def_.amp_text += str("; on the CPU: ", amp_class_name(c));
    return *this;
  }
  OpBuilder& flops(std::function<double(const P&, const ShapeVector&, const ShapeVector&)> fn) {
    def_.flops = [fn](const ParamsPtr& p, const ShapeVector& in, const ShapeVector& out) {
      return fn(cast(p), in, out);
    };
    return *this;
  }

  OpBuilder& inference_layer(
      std::function<std::optional<InferenceLayer>(const P&, const ShapeVector&, const ShapeVector&)>
          fn) {
    def_.inference_layer = [fn](const ParamsPtr& p, const ShapeVector& in, const ShapeVector& out) {
      return fn(cast(p), in, out);
    };
    return *this;
  }

  // Default type inference: every input, output and auxiliary state has one dtype.
  static void same_type(const ParamsPtr&, DTypeVector& in, DTypeVector& aux, DTypeVector& out);

 private:
  OpDef& def_;
};

// Shared by OpBuilder::same_type and operators that override part of it.
void infer_same_type(DTypeVector& in, DTypeVector& aux, DTypeVector& out,
                     const std::vector<std::string>& in_names = {});

template <typename P>
void OpBuilder<P>::same_type(const ParamsPtr&, DTypeVector& in, DTypeVector& aux,
                             DTypeVector& out) {
  infer_same_type(in, aux, out);
}

// Parameters for operators that take none.
struct NoParams : Params<NoParams> {
  static void declare(ParamDecl<NoParams>&) {}
};

}  // namespace mx::op
