#include "executor/executor.h"

#include <algorithm>
#include <chrono>
#include <type_traits>

#include "base/error.h"
#include "base/gpu_timer.h"
#include "base/logging.h"
#include "base/runtime_config.h"
#include "base/strings.h"
#include "graph/fuse_inference.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/fused_inference_op.h"
#include "op/registry.h"
#include "storage/storage.h"

namespace mx {

using graph::EntryRole;
using graph::Step;
using graph::StepKind;

namespace {

op::TensorRef ref_of(const NDArray& a) { return {a.raw_data(), a.shape(), a.dtype(), a.var()}; }

void add_resources(const op::OpDef& def, Context ctx, op::OpResources& res,
                   std::vector<Var*>& writes) {
  for (op::ResourceKind kind : def.resources) {
    if (kind == op::ResourceKind::kTempSpace) {
      res.temp = &op::ResourceManager::get().temp_space(ctx);
      writes.push_back(res.temp->var());
    } else {
      res.random = &op::ResourceManager::get().random(ctx);
      writes.push_back(res.random->var());
    }
  }
}

// Every operator the plan runs has a kernel on the bound device, so that a
// network with an operator the device lacks fails here, naming the node,
// before any memory is allocated or step queued.
void check_kernels(const graph::IndexedGraph& graph, const graph::ExecPlan& plan, Context ctx) {
  const DeviceKind device = ctx.kind();
  const int d = static_cast<int>(device);
  for (const auto* steps : {&plan.forward, &plan.backward}) {
    for (const Step& s : *steps) {
      if (s.kind == StepKind::kZero) continue;
      if (s.kind == StepKind::kSum) {
        if (!op::OpRegistry::get().find("ElementWiseSum").forward[d])
          throw InputError(
              str("the gradient sums (ElementWiseSum) have no kernel on ", ctx.to_string()));
        continue;
      }
      const graph::Node& node = graph.node(s.node);
      const op::OpDef& def = node.op->def();
      const bool backward = s.kind == StepKind::kBackward;
      if (backward ? !def.backward[d] : !def.forward[d])
        throw InputError(str("node '", node.name, "' (", def.name, ") has no ",
                             backward ? "backward kernel" : "kernel", " on ", ctx.to_string()));
    }
  }
}

// The inference fusion runs for CPU inference with oneDNN on, unless
// MX_DNNL_FUSE=0 (to compare, or to rule it out).
bool fusion_wanted(const BindOptions& options) {
  if (!options.fuse_inference || options.for_training || options.ctx.kind() != DeviceKind::kCPU ||
      !op::dnnl_enabled())
    return false;
  return runtime_config().dnnl_fuse;
}

// What each fused node made (MX_LOG_LEVEL=debug).
void log_fusion(const graph::IndexedGraph& g) {
  for (uint32_t n = 0; n < g.num_nodes(); ++n) {
    const graph::Node& node = g.node(n);
    if (node.is_variable()) continue;
    if (auto s = op::fused_inference_summary(*node.op)) {
      MX_LOG(kDebug) << node.name << ": " << s->layers << " layers as " << s->primitives
                     << " oneDNN primitives: " << s->convolutions << " convolutions ("
                     << s->winograd_convolutions << " Winograd, " << s->int8_convolutions
                     << " int8), " << s->folded_batch_norms << " BatchNorms folded into them, "
                     << s->fused_activations << " activations and " << s->fused_additions
                     << " additions fused, " << s->reorders << " reorders, workspace "
                     << s->workspace_bytes / (1 << 20) << " MiB"
                     << (s->bfloat16 ? ", in bfloat16" : "");
    }
  }
}

}  // namespace

Executor::Executor(const graph::Symbol& symbol, const std::map<std::string, NDArray>& args,
                   const std::map<std::string, NDArray>& grads,
                   const std::map<std::string, NDArray>& aux, const BindOptions& options)
    : symbol_(symbol), options_(options), args_(args), grads_(grads), aux_(aux) {
  bind_arrays();
}

std::unique_ptr<Executor> Executor::bind_recorded(const graph::Symbol& symbol,
                                                  const std::map<std::string, NDArray>& args,
                                                  const std::map<std::string, NDArray>& grads,
                                                  const std::map<std::string, NDArray>& aux,
                                                  RecordedForward recorded, BindOptions options) {
  options.for_training = true;
  options.mirror = graph::MirrorPolicy::kNone;
  options.fuse_inference = false;
  auto exe = std::unique_ptr<Executor>(new Executor(symbol, options));
  exe->args_ = args;
  exe->grads_ = grads;
  exe->aux_ = aux;
  exe->recorded_ = std::make_unique<RecordedForward>(std::move(recorded));
  exe->forward_was_train_ = true;  // backward() needs no forward() here
  exe->bind_arrays();
  return exe;
}

void Executor::bind_arrays() {
  const auto arg_names = symbol_.list_arguments();
  const auto aux_names = symbol_.list_auxiliary_states();
  graph::ShapeMap shapes;
  for (const auto& name : arg_names) {
    auto it = args_.find(name);
    if (it == args_.end())
      throw InputError("bind: no array for argument '" + name +
                       "'; arguments are: " + join(arg_names, ", "));
    shapes[name] = it->second.shape();
    if (!options_.dtypes.count(name)) options_.dtypes[name] = it->second.dtype();
  }
  for (const auto& name : aux_names)
    if (!aux_.count(name)) throw InputError("bind: no array for auxiliary state '" + name + "'");
  for (const auto& [name, g] : grads_)
    if (std::find(arg_names.begin(), arg_names.end(), name) == arg_names.end())
      throw InputError("bind: gradient given for '" + name + "', which is not an argument" +
                       did_you_mean(name, arg_names));
  // Arguments without a gradient array get none.
  for (const auto& name : arg_names)
    if (!grads_.count(name)) options_.grad_req[name] = graph::GradReq::kNull;
  prepare(shapes);
}

std::unique_ptr<Executor> Executor::simple_bind(const graph::Symbol& symbol,
                                                const graph::ShapeMap& shapes,
                                                const BindOptions& options) {
  auto inferred = symbol.infer_shape(shapes);
  if (!inferred.complete) {
    const auto names = symbol.list_arguments();
    std::vector<std::string> unknown;
    for (size_t i = 0; i < names.size(); ++i)
      if (!inferred.arguments[i].is_known())
        unknown.push_back(names[i] + " " + inferred.arguments[i].to_string());
    throw InputError("simple_bind: cannot infer every shape from the inputs given; unknown: " +
                     join(unknown, ", "));
  }
  std::map<std::string, NDArray> args, grads, aux;
  const auto arg_names = symbol.list_arguments();
  const auto aux_names = symbol.list_auxiliary_states();
  for (size_t i = 0; i < arg_names.size(); ++i) {
    auto dt =
        options.dtypes.count(arg_names[i]) ? options.dtypes.at(arg_names[i]) : DType::kFloat32;
    args[arg_names[i]] = NDArray::zeros(inferred.arguments[i], options.ctx, dt);
    auto req = options.grad_req.count(arg_names[i]) ? options.grad_req.at(arg_names[i])
                                                    : options.default_grad_req;
    if (options.for_training && req != graph::GradReq::kNull)
      grads[arg_names[i]] = NDArray::zeros(inferred.arguments[i], options.ctx, dt);
  }
  for (size_t i = 0; i < aux_names.size(); ++i)
    aux[aux_names[i]] = NDArray::zeros(inferred.aux[i], options.ctx);
  return std::make_unique<Executor>(symbol, args, grads, aux, options);
}

Executor::~Executor() = default;

op::FusedGraphStats Executor::fused_stats() const {
  op::FusedGraphStats sum;
  for (uint32_t n = 0; n < graph_->num_nodes(); ++n) {
    const graph::Node& node = graph_->node(n);
    if (node.is_variable()) continue;
    if (auto s = op::fused_inference_summary(*node.op)) {
      sum.primitives += s->primitives;
      sum.convolutions += s->convolutions;
      sum.winograd_convolutions += s->winograd_convolutions;
      sum.int8_convolutions += s->int8_convolutions;
      sum.fully_connected += s->fully_connected;
      sum.int8_fully_connected += s->int8_fully_connected;
      sum.folded_batch_norms += s->folded_batch_norms;
      sum.fused_activations += s->fused_activations;
      sum.fused_additions += s->fused_additions;
      sum.reorders += s->reorders;
      sum.workspace_bytes += s->workspace_bytes;
      sum.weight_preparations += s->weight_preparations;
    }
  }
  return sum;
}

std::unique_ptr<Executor> Executor::reshape(const graph::ShapeMap& input_shapes) const {
  if (recorded_) throw Error("reshape: an executor of a recorded forward pass cannot be reshaped");
  auto inferred = symbol_.infer_shape(input_shapes);
  const auto arg_names = symbol_.list_arguments();
  // Parameters keep their arrays; arguments whose shape changes get new ones.
  std::map<std::string, NDArray> args, grads;
  for (size_t i = 0; i < arg_names.size(); ++i) {
    const std::string& name = arg_names[i];
    const NDArray& old = args_.at(name);
    Shape shape = inferred.arguments[i].is_known() ? inferred.arguments[i] : old.shape();
    args[name] = old.shape() == shape ? old : NDArray::zeros(shape, options_.ctx, old.dtype());
    if (auto it = grads_.find(name); it != grads_.end())
      grads[name] = it->second.shape() == shape ? it->second
                                                : NDArray::zeros(shape, options_.ctx, old.dtype());
  }
  auto exe = std::unique_ptr<Executor>(new Executor(symbol_, options_));
  exe->args_ = std::move(args);
  exe->grads_ = std::move(grads);
  exe->aux_ = aux_;  // auxiliary states have no batch dimension
  graph::ShapeMap shapes;
  for (const auto& [name, a] : exe->args_) shapes[name] = a.shape();
  exe->prepare(shapes, blocks_);
  return exe;
}

namespace {

graph::GraphPlanOptions graph_plan_options(const BindOptions& options, bool forward_recorded) {
  graph::GraphPlanOptions out;
  out.plan.forward_recorded = forward_recorded;
  out.plan.for_training = options.for_training;
  out.plan.grad_req = options.grad_req;
  out.plan.default_grad_req = options.default_grad_req;
  out.mirror = options.mirror;
  out.memory = options.memory;
  return out;
}

// What the planner decided (the byte counts of the bound arrays aside).
MemoryReport planned_report(const graph::GraphPlan& planned) {
  MemoryReport report;
  report.recompute_steps = planned.recompute_steps;
  report.planned_internal_bytes = planned.memory.total_bytes();
  report.num_blocks = planned.memory.block_bytes.size();
  report.num_entries = planned.plan.entries.size();
  report.inplace_outputs = planned.memory.inplace_outputs.size();
  return report;
}

}  // namespace

void Executor::prepare(const graph::ShapeMap& shapes, const std::vector<NDArray>& reuse) {
  graph_ = std::make_unique<graph::IndexedGraph>(symbol_.outputs());
  // Auxiliary states come with their arrays; given dtypes win over theirs.
  graph::ShapeMap known_shapes = shapes;
  std::map<std::string, DType> dtypes;
  for (const auto& [name, a] : aux_) {
    known_shapes[name] = a.shape();
    dtypes[name] = a.dtype();
  }
  for (const auto& [name, dtype] : options_.dtypes) dtypes[name] = dtype;
  if (options_.bfloat16_inference && !fusion_wanted(options_)) {
    MX_LOG(kWarning) << "bfloat16 inference needs the fused inference graphs, which are off "
                        "here (MX_DNNL_FUSE=0, training, or not the CPU): computing in float32";
  }
  if (fusion_wanted(options_)) {
    graph::EntryTypes entries = graph::infer_bound_entries(*graph_, known_shapes, dtypes);
    graph::InferenceFusion fused = graph::fuse_for_inference(
        *graph_, entries.shapes, entries.dtypes, options_.bfloat16_inference);
    if (fused.fused_nodes > 0) {
      graph_ = std::make_unique<graph::IndexedGraph>(fused.heads);
      fused_nodes_ = fused.fused_nodes;
      log_fusion(*graph_);
    } else if (options_.bfloat16_inference) {
      MX_LOG(kWarning) << "bfloat16 inference: no layers were fused (a fused graph needs a "
                          "convolution), so everything computes in float32";
    }
  }
  graph::GraphPlan planned = graph::plan_graph(*graph_, known_shapes, dtypes,
                                               graph_plan_options(options_, recorded_ != nullptr));
  report_ = planned_report(planned);
  plan_ = std::move(planned.plan);
  check_bound_shapes();
  check_kernels(*graph_, plan_, options_.ctx);
  allocate_blocks(planned.memory, reuse);
  bind_entry_arrays(planned.memory);
  for (int64_t e : plan_.outputs) outputs_.push_back(entry_arrays_[static_cast<size_t>(e)]);
  for (const auto& [name, a] : args_) report_.argument_bytes += a.bytes();
  for (const auto& [name, a] : aux_) report_.argument_bytes += a.bytes();
  for (const auto& [name, a] : grads_) report_.gradient_bytes += a.bytes();
}

// The bound arrays against the inferred shapes.
void Executor::check_bound_shapes() const {
  const graph::IndexedGraph& g = *graph_;
  for (uint32_t v : g.variables()) {
    const auto& name = g.node(v).name;
    const Shape& expected = plan_.entries[g.entry_id(v, 0)].shape;
    auto check = [&](const std::map<std::string, NDArray>& arrays, const char* what) {
      auto it = arrays.find(name);
      if (it != arrays.end() && it->second.shape() != expected)
        throw InputError(str("bind: ", what, " '", name, "' has shape ",
                             it->second.shape().to_string(), ", but the network needs ",
                             expected.to_string()));
    };
    check(args_, "argument");
    check(aux_, "auxiliary state");
    check(grads_, "gradient of");
  }
}

void Executor::allocate_blocks(const graph::MemoryPlan& memory, const std::vector<NDArray>& reuse) {
  for (size_t b = 0; b < memory.block_bytes.size(); ++b) {
    const auto bytes = static_cast<int64_t>(memory.block_bytes[b]);
    if (b < reuse.size() && reuse[b].size() >= bytes) {
      blocks_.push_back(reuse[b]);  // shared with the executor this one was reshaped from
      continue;
    }
    blocks_.emplace_back(Shape{bytes}, options_.ctx, DType::kUint8);
    report_.allocated_internal_bytes += StoragePool::round_size(memory.block_bytes[b]);
  }
}

// Every plan entry's array: a bound one, ones for a head gradient, or a view
// of its planned block.
void Executor::bind_entry_arrays(const graph::MemoryPlan& memory) {
  entry_arrays_.resize(plan_.entries.size());
  for (size_t e = 0; e < plan_.entries.size(); ++e) {
    const auto& entry = plan_.entries[e];
    const std::string& var_name = graph_->node(entry.variable).name;
    switch (entry.role) {
      case EntryRole::kArgument: entry_arrays_[e] = args_.at(var_name); break;
      case EntryRole::kAux: entry_arrays_[e] = aux_.at(var_name); break;
      case EntryRole::kArgGrad: entry_arrays_[e] = grads_.at(var_name); break;
      case EntryRole::kHeadGrad:
        entry_arrays_[e] = NDArray::full(entry.shape, 1.0, options_.ctx, entry.dtype);
        break;
      case EntryRole::kRecorded: entry_arrays_[e] = recorded_value(entry, e); break;
      case EntryRole::kInternal: {
        const int64_t block = memory.storage_of[e];
        if (block >= 0)
          entry_arrays_[e] = blocks_[static_cast<size_t>(block)].view(entry.shape, entry.dtype);
        break;
      }
    }
  }
}

// An operator's output as the recorded forward pass computed it, checked
// against what the bind inferred.
NDArray Executor::recorded_value(const graph::PlanEntry& entry, size_t entry_id) const {
  const graph::Node& node = graph_->node(entry.variable);
  auto it = recorded_->nodes.find(&node);
  const size_t k = entry_id - graph_->entry_id(entry.variable, 0);
  if (it == recorded_->nodes.end() || k >= it->second.outputs.size())
    throw Error(str("bind: no recorded value for output ", k, " of ",
                    graph::node_owner(node.name, node.op->def().name)));
  const NDArray& value = it->second.outputs[k];
  if (value.shape() != entry.shape || value.dtype() != entry.dtype)
    throw Error(str("bind: the recorded '", entry.name, "' is ", value.describe(),
                    ", but the graph makes ", dtype_name(entry.dtype), " ",
                    entry.shape.to_string()));
  return value;
}

void Executor::forward(bool is_train) {
  if (recorded_)
    throw Error("forward: this executor is bound to a forward pass that already ran (autograd)");
  forward_was_train_ = is_train;
  run_steps(plan_.forward, is_train);
}

void Executor::backward(const std::vector<NDArray>& head_grads) {
  if (!plan_.for_training)
    throw Error("backward: the executor was bound for inference (for_training = false)");
  if (!forward_was_train_) throw Error("backward: call forward(is_train = true) first");
  if (!head_grads.empty()) {
    if (head_grads.size() != plan_.outputs.size())
      throw InputError(str("backward: ", head_grads.size(), " head gradients for ",
                           plan_.outputs.size(), " outputs"));
    for (size_t k = 0; k < head_grads.size(); ++k) {
      const int64_t e = plan_.head_grads[k];
      if (e < 0 || head_grads[k].is_none()) continue;
      NDArray dst = entry_arrays_[static_cast<size_t>(e)];
      if (head_grads[k].shape() != dst.shape())
        throw InputError(str("backward: head gradient ", k, " has shape ",
                             head_grads[k].shape().to_string(), ", output is ",
                             dst.shape().to_string()));
      head_grads[k].copy_to(dst);
    }
  }
  run_steps(plan_.backward, true);
}

// What one step's engine operation reads and writes, and the arrays its
// closure keeps alive until it has run.
struct Executor::StepArrays {
  std::vector<Var*> reads, writes;
  std::vector<NDArray> keep;
};

NDArray Executor::array_of(int64_t entry) const {
  return entry < 0 ? NDArray() : entry_arrays_[static_cast<size_t>(entry)];
}

Executor::StepArrays Executor::step_arrays(const Step& s) const {
  StepArrays arrays;
  // Sized up front: this runs for every step of every batch.
  arrays.keep.reserve(s.inputs.size() + s.outputs.size());
  arrays.reads.reserve(s.inputs.size());
  arrays.writes.reserve(s.outputs.size() + s.inputs.size() + 1);  // + aux, temp space
  for (size_t k = 0; k < s.inputs.size(); ++k) {
    NDArray a = array_of(s.inputs[k]);
    if (a.is_none()) continue;
    arrays.keep.push_back(a);
    if (s.reads[k]) arrays.reads.push_back(a.var());
  }
  for (int64_t e : s.outputs) {
    NDArray a = array_of(e);
    if (a.is_none()) continue;
    arrays.keep.push_back(a);
    arrays.writes.push_back(a.var());
  }
  return arrays;
}

void Executor::run_steps(const std::vector<Step>& steps, bool is_train) {
  for (const Step& s : steps) {
    switch (s.kind) {
      case StepKind::kZero: push_zero(s); break;
      case StepKind::kSum: push_sum(s, step_arrays(s)); break;
      case StepKind::kForward:
      case StepKind::kRecompute: push_forward(s, is_train, step_arrays(s)); break;
      case StepKind::kBackward: push_backward(s, step_arrays(s)); break;
    }
  }
}

namespace {

const auto& kernel_of(const op::OpDef& def, DeviceKind device, const op::ForwardCall&) {
  return def.forward[static_cast<int>(device)];
}
const auto& kernel_of(const op::OpDef& def, DeviceKind device, const op::BackwardCall&) {
  return def.backward[static_cast<int>(device)];
}

}  // namespace

// The one way a step reaches the engine: `op`'s forward or backward kernel
// (as `call` is a ForwardCall or a BackwardCall) with the resources the
// operator asks for.
template <typename Call>
void Executor::push_kernel(const op::OpInstance& op, Call call, StepArrays arrays,
                           const std::string& name) const {
  constexpr bool backward = std::is_same_v<Call, op::BackwardCall>;
  const Context ctx = options_.ctx;
  const DeviceKind device = ctx.kind();
  if (!kernel_of(op.def(), device, call))
    throw Error(str(op.owner(), ": no ", device_kind_name(device),
                    backward ? " backward kernel" : " kernel"));
  add_resources(op.def(), ctx, call.resources, arrays.writes);
  Engine::get().push(
      [op, call = std::move(call), device, keep = std::move(arrays.keep)](RunContext rctx) mutable {
        call.rctx = rctx;
        kernel_of(op.def(), device, call)(op.params(), call);
      },
      ctx, std::move(arrays.reads), std::move(arrays.writes), FnProperty::kNormal, 0, name);
}

void Executor::push_zero(const Step& s) {
  if (s.req[0] != op::OpReq::kAdd) array_of(s.outputs[0]).fill(0.0);
}

void Executor::push_sum(const Step& s, StepArrays arrays) {
  // One parsed ElementWiseSum per input count, kept across iterations.
  auto found = sum_ops_.find(s.inputs.size());
  if (found == sum_ops_.end())
    found = sum_ops_
                .emplace(s.inputs.size(),
                         op::OpInstance("ElementWiseSum",
                                        {{"num_args", std::to_string(s.inputs.size())}}))
                .first;
  op::ForwardCall call;
  for (int64_t e : s.inputs) call.inputs.push_back(ref_of(array_of(e)));
  call.outputs = {ref_of(array_of(s.outputs[0]))};
  call.req = s.req;
  push_kernel(found->second, std::move(call), std::move(arrays), "gradient sum");
}

void Executor::push_forward(const Step& s, bool is_train, StepArrays arrays) {
  const graph::Node& node = graph_->node(s.node);
  const size_t num_args = node.op->input_names().size();
  op::ForwardCall call;
  call.is_train = is_train || s.kind == StepKind::kRecompute;
  call.inputs.reserve(std::min(num_args, s.inputs.size()));
  call.outputs.reserve(s.outputs.size());
  for (size_t k = 0; k < s.inputs.size(); ++k)
    (k < num_args ? call.inputs : call.aux).push_back(ref_of(array_of(s.inputs[k])));
  for (int64_t e : s.outputs) call.outputs.push_back(ref_of(array_of(e)));
  call.req = s.req;
  if (call.is_train && s.kind == StepKind::kForward) {
    // Training updates auxiliary states (BatchNorm's moving statistics).
    for (size_t k = num_args; k < s.inputs.size(); ++k)
      arrays.writes.push_back(array_of(s.inputs[k]).var());
  }
  push_kernel(*node.op, std::move(call), std::move(arrays), node.name);
  if (monitor_ && s.kind == StepKind::kForward) push_monitor(s);
}

void Executor::push_monitor(const Step& s) {
  const graph::Node& node = graph_->node(s.node);
  for (size_t k = 0; k < s.outputs.size() && k < node.num_visible_outputs(); ++k) {
    NDArray out = array_of(s.outputs[k]);
    std::string name = node.output_name(static_cast<uint32_t>(k));
    Engine::get().push([monitor = monitor_, name, out](RunContext) { monitor(name, out); },
                       options_.ctx, {out.var()}, {}, FnProperty::kNormal, 0, "monitor " + name);
  }
}

void Executor::push_backward(const Step& s, StepArrays arrays) {
  const graph::Node& node = graph_->node(s.node);
  const auto layout = graph::BackwardLayout::of(node);
  auto refs = [&](size_t at, size_t count) {
    std::vector<op::TensorRef> out;
    out.reserve(count);
    for (size_t i = 0; i < count; ++i) out.push_back(ref_of(array_of(s.inputs[at + i])));
    return out;
  };
  op::BackwardCall call;
  call.out_grads = refs(layout.out_grads_at(), layout.out_grads);
  call.inputs = refs(layout.inputs_at(), layout.inputs);
  call.outputs = refs(layout.outputs_at(), layout.outputs);
  call.aux = refs(layout.aux_at(), layout.aux);
  call.in_grads.reserve(s.outputs.size());
  for (size_t i = 0; i < s.outputs.size(); ++i) {
    op::TensorRef r = ref_of(array_of(s.outputs[i]));
    if (s.outputs[i] < 0) r.shape = call.inputs[i].shape;  // no gradient wanted: shape only
    call.in_grads.push_back(r);
  }
  call.req = s.req;
  if (recorded_) call.is_train = recorded_->nodes.at(&node).is_train;  // the mode it ran in
  push_kernel(*node.op, std::move(call), std::move(arrays), "backward of " + node.name);
}

std::vector<Executor::StepTime> Executor::profile(int iterations) {
  std::vector<StepTime> times;
  // Wall time on the CPU; on a GPU, GPU time: see below.
  const auto time_step = [this](const Step& step) -> double {
    const Context ctx = options_.ctx;
    if (!ctx.is_gpu()) {
      const auto start = std::chrono::steady_clock::now();
      run_steps({step}, true);
      Engine::get().wait_all();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count();
    }
    // On a GPU, the time between two events on the compute stream around the
    // step's kernels: GPU time, as a kernel profiler reports it, without the
    // host's launch and wait. The markers write what the step writes, so the
    // engine orders the step between them.
    const std::vector<Var*> writes = step_arrays(step).writes;
    auto timer = std::make_shared<gpu::StreamTimer>(ctx.id);
    Engine::get().push([timer](RunContext rctx) { timer->start(rctx.stream); }, ctx, {}, writes,
                       FnProperty::kNormal, 0, "profile: start");
    run_steps({step}, true);
    Engine::get().push([timer](RunContext rctx) { timer->stop(rctx.stream); }, ctx, {}, writes,
                       FnProperty::kNormal, 0, "profile: stop");
    Engine::get().wait_all();
    return timer->elapsed_ms();
  };
  auto label = [&](const Step& step, bool backward) {
    StepTime t;
    t.backward = backward;
    if (step.kind == StepKind::kSum) {
      t.node = "(gradient sum)";
      t.op = "ElementWiseSum";
    } else if (step.kind == StepKind::kZero) {
      t.node = "(zero gradient)";
      t.op = "fill";
    } else {
      t.node = graph_->node(step.node).name;
      t.op = graph_->node(step.node).op->def().name;
    }
    return t;
  };
  for (const auto& step : plan_.forward) times.push_back(label(step, false));
  for (const auto& step : plan_.backward) times.push_back(label(step, true));
  Engine::get().wait_all();
  for (int it = 0; it < iterations; ++it) {
    size_t k = 0;
    for (const auto* steps : {&plan_.forward, &plan_.backward}) {
      const bool backward = steps == &plan_.backward;
      if (backward) forward_was_train_ = true;
      for (const auto& step : *steps) times[k++].ms += time_step(step);
      if (!plan_.for_training) break;
    }
  }
  for (auto& t : times) t.ms /= std::max(1, iterations);
  if (!plan_.for_training) times.resize(plan_.forward.size());
  return times;
}

MemoryReport Executor::plan_only(const graph::Symbol& symbol, const graph::ShapeMap& shapes,
                                 const BindOptions& options) {
  graph::IndexedGraph g(symbol.outputs());
  const graph::GraphPlan planned =
      graph::plan_graph(g, shapes, options.dtypes, graph_plan_options(options, false));
  const graph::ExecPlan& plan = planned.plan;
  MemoryReport report = planned_report(planned);
  for (const auto& e : plan.entries) {
    if (e.role == EntryRole::kArgument || e.role == EntryRole::kAux)
      report.argument_bytes += e.bytes();
    if (e.role == EntryRole::kArgGrad) report.gradient_bytes += e.bytes();
  }
  return report;
}

}  // namespace mx
