// Optimizers with MXNet 1.9.1's names, parameters and update formulas
// (python/mxnet/optimizer/optimizer.py and the update operators of
// src/operator/optimizer_op-inl.h): sgd, nag, adam, adamw, rmsprop, adagrad.
//
// An update is one engine operation per parameter: it reads the gradient and
// writes the weight and the optimizer's state arrays in one fused loop
// (float32, or float64) on the weight's device: parallel chunks on the CPU,
// one kernel launch on a GPU (update_kernels.h holds the per-element step
// both run), so updates interleave with the rest of the engine's work like
// any other NDArray operation. State arrays live on the weight's device.
//
// MXNet's bookkeeping is reproduced: each index counts its updates (starting
// from begin_num_update), num_update is the largest count, the learning rate
// is the schedule's value at num_update (or learning_rate without one),
// times the parameter's lr_mult; Adam's t is the index's own count.
//
// Weight decay defaults (MXNet 1.9.1 Optimizer.set_wd_mult, which Module
// uses through param_idx2name): a named parameter whose name ends neither in
// "_weight" nor in "_gamma" gets wd_mult 0 — biases, BatchNorm betas and
// anything else — unless set_wd_mult names it. Gammas are decayed like
// weights. Parameters without a name get wd_mult 1.
//
// An optimizer (and an Updater) is driven from one thread at a time — the
// trainer's or the KVStore's; the kernels it pushes run on engine workers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/param.h"
#include "ndarray/ndarray.h"
#include "optim/lr_scheduler.h"

namespace mx::optim {

namespace kernels {
struct StepScalars;
}

// The parameters every optimizer takes (MXNet's Optimizer.__init__).
struct OptimizerFields {
  double learning_rate = 0.01;
  double wd = 0.0;
  double rescale_grad = 1.0;
  std::optional<double> clip_gradient;  // None, or <= 0: no clipping (as MXNet's operators)
  int64_t begin_num_update = 0;
};

// Declares the OptimizerFields of a parameter struct P derived from them.
template <typename P>
void declare_optimizer_fields(ParamDecl<P>& d, double default_learning_rate) {
  d.field("learning_rate", static_cast<double P::*>(&OptimizerFields::learning_rate))
      .set_default(default_learning_rate)
      .set_lower_bound(0.0)
      .describe("step size (the schedule's base rate when a schedule is set)");
  d.field("wd", static_cast<double P::*>(&OptimizerFields::wd))
      .set_default(0.0)
      .set_lower_bound(0.0)
      .describe("weight decay (L2 penalty) coefficient");
  d.field("rescale_grad", static_cast<double P::*>(&OptimizerFields::rescale_grad))
      .set_default(1.0)
      .describe("gradients are multiplied by this first, often 1/batch_size");
  d.field("clip_gradient", static_cast<std::optional<double> P::*>(&OptimizerFields::clip_gradient))
      .set_default(std::nullopt)
      .describe("clip gradients to [-clip_gradient, clip_gradient]; None or <= 0: no clipping");
  d.field("begin_num_update", static_cast<int64_t P::*>(&OptimizerFields::begin_num_update))
      .set_default(0)
      .set_lower_bound(0)
      .describe("update count each parameter starts from");
}

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // "sgd", "nag", "adam", "adamw", "rmsprop", "adagrad".
  const std::string& name() const { return name_; }
  // Every parameter as MXNet's attribute strings.
  virtual std::map<std::string, std::string> params() const = 0;

  // Names of the state arrays of one weight, in MXNet's order ("mom";
  // "mean", "var"; "n", "g", "delta"; "history"). Empty when there is none
  // (sgd and nag without momentum).
  virtual std::vector<std::string> state_names() const = 0;
  // Zero-filled state arrays shaped like `weight` (MXNet's create_state).
  std::vector<NDArray> create_state(int index, const NDArray& weight) const;

  // Counts the update of `index`, computes its learning rate and weight
  // decay, and pushes one engine operation that reads `grad` and writes
  // `weight` and `state` (from create_state). Weight, gradient and state
  // must be float32 or float64 arrays of one shape, dtype and device.
  void update(int index, const NDArray& weight, const NDArray& grad,
              const std::vector<NDArray>& state);

  // --- learning rate, schedule, per-parameter multipliers ----------------------
  // The base rate now: the schedule's value at num_update(), else learning_rate.
  double learning_rate();
  // Sets learning_rate; an error when a schedule decides the rate.
  void set_learning_rate(double lr);
  void set_lr_scheduler(std::unique_ptr<LRScheduler> scheduler);
  LRScheduler* lr_scheduler() const { return scheduler_.get(); }

  // Names of the parameters by index (MXNet's param_idx2name); the names
  // select lr_mult / wd_mult and the default weight-decay rule above.
  void set_param_names(std::map<int, std::string> idx2name);
  const std::map<int, std::string>& param_names() const { return idx2name_; }
  // Multipliers by parameter name; each call replaces the previous map, as
  // MXNet's set_lr_mult / set_wd_mult do.
  void set_lr_mult(std::map<std::string, double> lr_mult);
  void set_wd_mult(std::map<std::string, double> wd_mult);
  double lr_mult(int index) const;
  double wd_mult(int index) const;
  // The rate and decay the next update of `index` would use (the rate at
  // the current num_update).
  double lr_for(int index);
  double wd_for(int index) const;

  // --- counters ---------------------------------------------------------------
  int64_t num_update() const { return num_update_; }
  // The factor every gradient is multiplied by first (1 / batch by default).
  double rescale_grad() const { return fields_.rescale_grad; }
  // Changes it for the next updates: a loss-scaled step divides its
  // gradients by the loss scale here, as MXNet's AMP does, not in a pass of
  // its own.
  void set_rescale_grad(double rescale) { fields_.rescale_grad = rescale; }
  // Updates `index` has had, begin_num_update included (0 before its first).
  int64_t update_count(int index) const;

  // Counters and schedule position as JSON (for Updater::save_states), and
  // back; load throws InputError naming `source` on a mismatch.
  nlohmann::json counters() const;
  void load_counters(const nlohmann::json& counters, const std::string& source);

 protected:
  Optimizer(std::string name, const OptimizerFields& fields);

  // What one update of one parameter uses.
  struct Step {
    double lr = 0;  // learning rate times lr_mult
    double wd = 0;  // weight decay times wd_mult
    int64_t t = 0;  // the index's update count, this update included
  };
  virtual void push_update(const NDArray& weight, const NDArray& grad,
                           const std::vector<NDArray>& state, const Step& step) const = 0;

  const OptimizerFields& fields() const { return fields_; }
  // The clipping bound, or a negative value when clipping is off.
  double clip_bound() const;
  // The hyper-parameters every update step takes (update_kernels.h).
  kernels::StepScalars scalars(const Step& step) const;

 private:
  std::string name_;
  OptimizerFields fields_;
  std::unique_ptr<LRScheduler> scheduler_;
  std::map<int, std::string> idx2name_;
  std::map<std::string, double> lr_mult_, wd_mult_;
  std::map<int, int64_t> update_count_;
  int64_t num_update_ = 0;
};

// The optimizer names make_optimizer knows.
std::vector<std::string> optimizer_names();

// Builds an optimizer from its name (case-insensitive; MXNet's registry
// names) and parameters (MXNet's names, as attribute strings). Unknown names
// or parameters and bad values throw InputError naming them.
std::unique_ptr<Optimizer> make_optimizer(const std::string& name,
                                          const std::map<std::string, std::string>& params);

// MXNet's Updater: owns the optimizer and the state of every index, creates
// a state on an index's first update, and saves/loads everything needed to
// resume training exactly.
class Updater {
 public:
  explicit Updater(std::unique_ptr<Optimizer> optimizer);

  // Updates `weight` with `grad` (MXNet's updater(index, grad, weight)).
  void operator()(int index, const NDArray& grad, const NDArray& weight);

  Optimizer& optimizer() { return *optimizer_; }
  const Optimizer& optimizer() const { return *optimizer_; }
  // The state arrays of `index` (empty before its first update).
  const std::vector<NDArray>& state(int index) const;
  bool has_state(int index) const { return states_.count(index) != 0; }

  // Writes the state arrays to `path` in the .params format (names
  // "INDEX:STATE", e.g. "3:mom", readable by mx.nd.load) and a JSON header
  // to `path`.json: optimizer name and parameters, parameter names, state
  // layout, update counters, schedule position and a fingerprint of the
  // arrays file. Each file is written atomically.
  void save_states(const std::string& path) const;
  // Reads what save_states wrote; arrays are placed on `ctx`. Throws
  // InputError when the files are missing, malformed, or were written by a
  // different optimizer or state layout.
  void load_states(const std::string& path, Context ctx = Context::cpu());

 private:
  std::unique_ptr<Optimizer> optimizer_;
  std::map<int, std::vector<NDArray>> states_;
};

}  // namespace mx::optim
