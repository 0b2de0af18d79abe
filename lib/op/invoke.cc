#include "op/invoke.h"

#include "base/error.h"
#include "op/registry.h"

namespace mx::op {
namespace {

std::vector<Var*> vars_of(const std::vector<NDArray>& arrays) {
  std::vector<Var*> vars;
  for (const auto& a : arrays)
    if (!a.is_none()) vars.push_back(a.var());
  return vars;
}

std::vector<TensorRef> refs_of(const std::vector<NDArray>& arrays) {
  std::vector<TensorRef> refs;
  for (const auto& a : arrays) refs.push_back({a.raw_data(), a.shape(), a.dtype(), a.var()});
  return refs;
}

Context context_of(const OpInstance& op, const std::vector<NDArray>& arrays) {
  Context ctx = Context::cpu();
  bool found = false;
  for (const auto& a : arrays) {
    if (a.is_none()) continue;
    if (found && a.ctx() != ctx)
      throw Error(str(op.owner(), ": arrays on different devices (", ctx.to_string(), " and ",
                      a.ctx().to_string(), ")"));
    ctx = a.ctx();
    found = true;
  }
  return ctx;
}

DeviceKind device_of(const OpInstance& op, Context ctx) {
  DeviceKind kind = ctx.is_gpu() ? DeviceKind::kGPU : DeviceKind::kCPU;
  if (!op.def().has_kernel(kind))
    throw Error(str(op.owner(), ": operator ", op.def().name, " has no ",
                    ctx.is_gpu() ? "GPU" : "CPU", " kernel"));
  return kind;
}

// Resource variables and the pointers the kernel will use.
struct ResourceUse {
  OpResources resources;
  std::vector<Var*> vars;
};

ResourceUse resources_for(const OpDef& def, Context ctx) {
  ResourceUse use;
  for (ResourceKind kind : def.resources) {
    if (kind == ResourceKind::kTempSpace) {
      use.resources.temp = &ResourceManager::get().temp_space(ctx);
      use.vars.push_back(use.resources.temp->var());
    } else {
      use.resources.random = &ResourceManager::get().random(ctx);
      use.vars.push_back(use.resources.random->var());
    }
  }
  return use;
}

void check_count(const OpInstance& op, const char* what, size_t got, size_t expected) {
  if (got != expected)
    throw InputError(str(op.owner(), ": ", expected, " ", what, " expected, ", got, " given"));
}

}  // namespace

OpInstance::OpInstance(const std::string& op, const AttrMap& attrs, const std::string& owner)
    : def_(&OpRegistry::get().find(op)), owner_(owner.empty() ? def_->name : owner) {
  params_ = def_->parse(attrs, owner_);
}

void OpInstance::infer_shape(ShapeVector& in, ShapeVector& aux, ShapeVector& out) const {
  try {
    def_->infer_shape(params_, in, aux, out);
  } catch (const InputError& e) {
    throw InputError(owner_ + ": " + e.what());
  }
}

void OpInstance::infer_type(DTypeVector& in, DTypeVector& aux, DTypeVector& out) const {
  try {
    def_->infer_type(params_, in, aux, out);
  } catch (const InputError& e) {
    throw InputError(owner_ + ": " + e.what());
  }
}

std::vector<OutputSpec> infer_outputs(const OpInstance& op, const std::vector<NDArray>& inputs,
                                      const std::vector<NDArray>& aux) {
  check_count(op, "inputs", inputs.size(), op.input_names().size());
  check_count(op, "auxiliary states", aux.size(), op.aux_names().size());
  ShapeVector in_shapes, aux_shapes, out_shapes(op.output_names().size());
  DTypeVector in_types, aux_types, out_types(out_shapes.size());
  for (const auto& a : inputs) {
    in_shapes.push_back(a.shape());
    in_types.push_back(a.dtype());
  }
  for (const auto& a : aux) {
    aux_shapes.push_back(a.shape());
    aux_types.push_back(a.dtype());
  }
  op.infer_shape(in_shapes, aux_shapes, out_shapes);
  op.infer_type(in_types, aux_types, out_types);
  std::vector<OutputSpec> specs;
  for (size_t i = 0; i < out_shapes.size(); ++i) {
    if (!out_shapes[i].is_known() || !out_types[i])
      throw InputError(str(op.owner(), ": cannot infer the shape of output ", i, " from inputs"));
    specs.push_back({out_shapes[i], *out_types[i]});
  }
  return specs;
}

std::vector<NDArray> invoke(const OpInstance& op, const std::vector<NDArray>& inputs,
                            const std::vector<NDArray>& aux, bool is_train) {
  const std::vector<OutputSpec> specs = infer_outputs(op, inputs, aux);
  const Context ctx = context_of(op, inputs);
  std::vector<NDArray> outputs;
  outputs.reserve(specs.size());
  for (const auto& spec : specs) outputs.emplace_back(spec.shape, ctx, spec.dtype);
  invoke_forward(op, inputs, aux, outputs, std::vector<OpReq>(outputs.size(), OpReq::kWrite),
                 is_train);
  return outputs;
}

std::vector<NDArray> invoke(const std::string& op, const std::vector<NDArray>& inputs,
                            const AttrMap& attrs, const std::vector<NDArray>& aux, bool is_train) {
  return invoke(OpInstance(op, attrs), inputs, aux, is_train);
}

void invoke_forward(const OpInstance& op, const std::vector<NDArray>& inputs,
                    const std::vector<NDArray>& aux, const std::vector<NDArray>& outputs,
                    const std::vector<OpReq>& req, bool is_train) {
  check_count(op, "inputs", inputs.size(), op.input_names().size());
  check_count(op, "outputs", outputs.size(), op.output_names().size());
  check_count(op, "output requests", req.size(), outputs.size());
  // An operator without inputs (_zeros, _arange) runs where its outputs are.
  const Context ctx = context_of(op, inputs.empty() ? outputs : inputs);
  const DeviceKind device = device_of(op, ctx);
  ResourceUse use = resources_for(op.def(), ctx);
  std::vector<Var*> reads = vars_of(inputs);
  std::vector<Var*> writes = vars_of(outputs);
  // BatchNorm updates its moving statistics in training only.
  for (Var* v : vars_of(aux)) (is_train ? writes : reads).push_back(v);
  writes.insert(writes.end(), use.vars.begin(), use.vars.end());

  ForwardCall call;
  call.is_train = is_train;
  call.resources = use.resources;
  call.inputs = refs_of(inputs);
  call.aux = refs_of(aux);
  call.outputs = refs_of(outputs);
  call.req = req;
  // The closure keeps the arrays (and so their memory) alive until it has run.
  Engine::get().push(
      [op, call, device,
       keep = std::vector<std::vector<NDArray>>{inputs, aux, outputs}](RunContext rctx) mutable {
        call.rctx = rctx;
        op.def().forward[static_cast<int>(device)](op.params(), call);
      },
      ctx, std::move(reads), std::move(writes), FnProperty::kNormal, 0, op.owner());
}

void invoke_backward(const OpInstance& op, const std::vector<NDArray>& out_grads,
                     const std::vector<NDArray>& inputs, const std::vector<NDArray>& outputs,
                     const std::vector<NDArray>& aux, const std::vector<NDArray>& in_grads,
                     const std::vector<OpReq>& req) {
  if (!op.def().has_backward())
    throw Error(str(op.owner(), ": operator ", op.def().name, " has no gradient"));
  check_count(op, "input gradients", in_grads.size(), inputs.size());
  check_count(op, "gradient requests", req.size(), in_grads.size());
  const Context ctx = context_of(op, inputs);
  const DeviceKind device = device_of(op, ctx);
  if (!op.def().backward[static_cast<int>(device)])
    throw Error(str(op.owner(), ": operator ", op.def().name, " has no ",
                    ctx.is_gpu() ? "GPU" : "CPU", " backward kernel"));
  ResourceUse use = resources_for(op.def(), ctx);
  std::vector<Var*> reads = vars_of(out_grads);
  for (Var* v : vars_of(inputs)) reads.push_back(v);
  for (Var* v : vars_of(outputs)) reads.push_back(v);
  for (Var* v : vars_of(aux)) reads.push_back(v);
  std::vector<Var*> writes = vars_of(in_grads);
  writes.insert(writes.end(), use.vars.begin(), use.vars.end());

  BackwardCall call;
  call.resources = use.resources;
  call.out_grads = refs_of(out_grads);
  call.inputs = refs_of(inputs);
  call.outputs = refs_of(outputs);
  call.aux = refs_of(aux);
  call.in_grads = refs_of(in_grads);
  call.req = req;
  Engine::get().push(
      [op, call, device,
       keep = std::vector<std::vector<NDArray>>{out_grads, inputs, outputs, aux, in_grads}](
          RunContext rctx) mutable {
        call.rctx = rctx;
        op.def().backward[static_cast<int>(device)](op.params(), call);
      },
      ctx, std::move(reads), std::move(writes), FnProperty::kNormal, 0,
      "backward of " + op.owner());
}

}  // namespace mx::op
