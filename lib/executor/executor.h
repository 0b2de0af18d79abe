// The executor binds a symbol to arrays on a device and runs it: forward
// (inference or training) and backward, every step an engine operation on
// the planned memory, so independent branches run concurrently and the
// optimizer's updates can overlap the backward pass.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "graph/exec_plan.h"
#include "graph/plan_graph.h"
#include "graph/plan_memory.h"
#include "graph/symbol.h"
#include "ndarray/ndarray.h"
#include "op/inference_layer.h"
#include "op/invoke.h"

namespace mx {

struct BindOptions {
  Context ctx = Context::cpu();
  bool for_training = true;
  std::map<std::string, graph::GradReq> grad_req;  // default write for every argument
  graph::GradReq default_grad_req = graph::GradReq::kWrite;
  graph::MemoryPlanOptions memory;
  graph::MirrorPolicy mirror = graph::MirrorPolicy::kNone;
  // Element types of the arguments (default float32).
  std::map<std::string, DType> dtypes;
  // Inference on the CPU with oneDNN: runs of convolutions, BatchNorm,
  // activations, pooling and additions run as fused oneDNN graphs
  // (graph/fuse_inference.h). Only with for_training = false; forward(true)
  // is then refused. Off by default; mx-predict turns it on (MX_DNNL_FUSE=0
  // turns it off).
  bool fuse_inference = false;
  // The fused graphs compute in bfloat16 (float32 sums; inputs, outputs and
  // parameters stay float32): about twice as fast on CPUs with AVX512-BF16,
  // about 3 significant digits. Layers outside them stay float32. Needs
  // fuse_inference; the caller checks op::dnnl_bf16_available().
  bool bfloat16_inference = false;
};

// What the planner decided and what the storage counters saw.
struct MemoryReport {
  size_t planned_internal_bytes = 0;    // activations, gradients (not the bound arrays)
  size_t allocated_internal_bytes = 0;  // the storage pool's count for those blocks
  size_t argument_bytes = 0;            // arguments + auxiliary states
  size_t gradient_bytes = 0;            // bound argument gradients
  size_t num_blocks = 0, num_entries = 0, inplace_outputs = 0, recompute_steps = 0;
};

// The forward pass of a graph as it already ran, operator by operator
// (autograd's recorded imperative calls, lib/autograd): for each operator
// node of the symbol every output as computed, hidden ones included
// (Dropout's mask, BatchNorm's batch statistics), and whether the node ran
// in training mode (its backward kernel is told the same).
struct RecordedForward {
  struct Values {
    std::vector<NDArray> outputs;
    bool is_train = true;
  };
  std::map<const graph::Node*, Values> nodes;
};

class Executor {
 public:
  // Binds with given arrays. `grads` may omit arguments (their gradient is
  // then not computed, as grad_req null). Shapes come from the arrays.
  Executor(const graph::Symbol& symbol, const std::map<std::string, NDArray>& args,
           const std::map<std::string, NDArray>& grads, const std::map<std::string, NDArray>& aux,
           const BindOptions& options);
  // Allocates arguments, gradients and auxiliary states from input shapes
  // (MXNet's simple_bind); arguments and gradients start at zero, auxiliary
  // states at zero.
  static std::unique_ptr<Executor> simple_bind(const graph::Symbol& symbol,
                                               const graph::ShapeMap& shapes,
                                               const BindOptions& options);
  // Binds the backward pass of a forward pass that already ran: the
  // operators' outputs are `recorded`'s arrays (bound, never written, given no
  // planned memory), so backward() reads exactly the values the forward pass
  // made (Dropout's mask, BatchNorm's batch statistics) and nothing is
  // computed twice. forward() is refused; backward() may run any number of
  // times. Always for training; options.mirror is ignored.
  static std::unique_ptr<Executor> bind_recorded(const graph::Symbol& symbol,
                                                 const std::map<std::string, NDArray>& args,
                                                 const std::map<std::string, NDArray>& grads,
                                                 const std::map<std::string, NDArray>& aux,
                                                 RecordedForward recorded, BindOptions options);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Pushes the forward steps; is_train selects training behaviour (dropout,
  // batch statistics) and is required before backward().
  void forward(bool is_train);
  // Pushes the backward steps. head_grads: one per output, none for loss
  // outputs; empty = ones for every non-loss output.
  void backward(const std::vector<NDArray>& head_grads = {});

  const std::vector<NDArray>& outputs() const { return outputs_; }
  const std::map<std::string, NDArray>& arg_dict() const { return args_; }
  const std::map<std::string, NDArray>& grad_dict() const { return grads_; }
  const std::map<std::string, NDArray>& aux_dict() const { return aux_; }
  const graph::Symbol& symbol() const { return symbol_; }

  // Called after each forward step with each output's name and array; the
  // callback runs inside an engine operation that reads the array.
  using Monitor = std::function<void(const std::string& name, const NDArray& value)>;
  void set_monitor(Monitor monitor) { monitor_ = std::move(monitor); }

  // An executor for new input shapes (e.g. another batch size) that shares
  // this one's parameters, gradients of unchanged shape and, where large
  // enough, its internal memory blocks (MXNet's reshape).
  std::unique_ptr<Executor> reshape(const graph::ShapeMap& input_shapes) const;

  MemoryReport memory_report() const { return report_; }
  // Nodes the inference fusion made (0 when it did not run or found nothing).
  int fused_nodes() const { return fused_nodes_; }
  // What those nodes made, summed over them.
  op::FusedGraphStats fused_stats() const;

  // Runs forward(train) and backward `iterations` times, one step at a time
  // with a wait after each, and returns the mean milliseconds of every step
  // (what `mx-train --benchmark` prints; the steps add up to the total).
  struct StepTime {
    std::string node, op;
    bool backward = false;
    double ms = 0;
  };
  std::vector<StepTime> profile(int iterations);
  // The internal memory a bind would plan, without allocating anything.
  static MemoryReport plan_only(const graph::Symbol& symbol, const graph::ShapeMap& shapes,
                                const BindOptions& options);

 private:
  Executor(const graph::Symbol& symbol, const BindOptions& options)
      : symbol_(symbol), options_(options) {}
  // The given arrays' checks and the bind (the public constructor's body).
  void bind_arrays();
  // `reuse`: blocks of another executor to take where large enough.
  void prepare(const graph::ShapeMap& shapes, const std::vector<NDArray>& reuse = {});
  void check_bound_shapes() const;
  void allocate_blocks(const graph::MemoryPlan& memory, const std::vector<NDArray>& reuse);
  void bind_entry_arrays(const graph::MemoryPlan& memory);
  // Each step is one engine operation on the planned arrays.
  void run_steps(const std::vector<graph::Step>& steps, bool is_train);
  struct StepArrays;
  StepArrays step_arrays(const graph::Step& step) const;
  void push_zero(const graph::Step& step);
  void push_sum(const graph::Step& step, StepArrays arrays);
  void push_forward(const graph::Step& step, bool is_train, StepArrays arrays);
  void push_backward(const graph::Step& step, StepArrays arrays);
  void push_monitor(const graph::Step& step);
  template <typename Call>
  void push_kernel(const op::OpInstance& op, Call call, StepArrays arrays,
                   const std::string& name) const;
  NDArray array_of(int64_t entry) const;
  NDArray recorded_value(const graph::PlanEntry& entry, size_t entry_id) const;

  graph::Symbol symbol_;
  BindOptions options_;
  std::map<std::string, NDArray> args_, grads_, aux_;
  std::vector<NDArray> outputs_;
  std::unique_ptr<graph::IndexedGraph> graph_;
  graph::ExecPlan plan_;
  std::vector<NDArray> entry_arrays_;  // per plan entry
  std::vector<NDArray> blocks_;        // planned storage
  MemoryReport report_;
  std::map<size_t, op::OpInstance> sum_ops_;  // gradient sums by input count
  Monitor monitor_;
  std::unique_ptr<RecordedForward> recorded_;  // bind_recorded only
  bool forward_was_train_ = false;
  int fused_nodes_ = 0;
};

}  // namespace mx
