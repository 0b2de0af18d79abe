// Learning-rate schedules with MXNet 1.9.1's names, parameters and formulas
// (python/mxnet/lr_scheduler.py): factor, multifactor, poly and cosine, each
// with an optional linear or constant warm-up.
//
// A schedule maps num_update (the largest number of updates any weight has
// had) to a learning rate. Factor and multifactor are stateful in MXNet —
// they advance a position as num_update grows — and are reproduced as such,
// so the sequence of rates equals MXNet's for any sequence of calls. The
// position is part of state() so a resumed run continues exactly.
//
// Deliberate difference: MXNet's optimizer overwrote base_lr after the
// schedule was built, which reached factor/multifactor but not the warm-up
// target or poly/cosine's start (they copy base_lr in their constructors).
// Here base_lr is given once, at construction (the optimizer's
// learning_rate), and every part of the schedule uses it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "base/param.h"
#include "base/shape.h"

namespace mx::optim {

enum class WarmupMode { kLinear, kConstant };

// The warm-up fields every schedule takes (MXNet's LRScheduler base).
struct WarmupFields {
  int64_t warmup_steps = 0;
  double warmup_begin_lr = 0.0;
  WarmupMode warmup_mode = WarmupMode::kLinear;
};

struct FactorSchedulerParams : WarmupFields, Params<FactorSchedulerParams> {
  int64_t step = 1;
  double factor = 1.0;
  double stop_factor_lr = 1e-8;
  static void declare(ParamDecl<FactorSchedulerParams>& d);
};

struct MultiFactorSchedulerParams : WarmupFields, Params<MultiFactorSchedulerParams> {
  Shape step;  // increasing update counts (at most 16)
  double factor = 1.0;
  static void declare(ParamDecl<MultiFactorSchedulerParams>& d);
};

struct PolySchedulerParams : WarmupFields, Params<PolySchedulerParams> {
  int64_t max_update = 1;
  double pwr = 2.0;
  double final_lr = 0.0;
  static void declare(ParamDecl<PolySchedulerParams>& d);
};

struct CosineSchedulerParams : WarmupFields, Params<CosineSchedulerParams> {
  int64_t max_update = 1;
  double final_lr = 0.0;
  static void declare(ParamDecl<CosineSchedulerParams>& d);
};

class LRScheduler {
 public:
  virtual ~LRScheduler() = default;

  // The learning rate after `num_update` updates (MXNet's __call__).
  double operator()(int64_t num_update);

  const std::string& type() const { return type_; }
  double base_lr() const { return base_lr_; }
  // The parameters as MXNet's attribute strings (base_lr not included).
  virtual std::map<std::string, std::string> params() const = 0;

  // Type, parameters, base_lr and position, to resume exactly.
  nlohmann::json state() const;
  // Restores the position from state(); throws InputError when the state
  // is of another schedule type or malformed.
  void load_state(const nlohmann::json& state, const std::string& source);

 protected:
  LRScheduler(std::string type, double base_lr, const WarmupFields& warmup);
  // The rate once warm-up is over.
  virtual double decayed(int64_t num_update) = 0;
  virtual nlohmann::json position() const = 0;
  virtual void set_position(const nlohmann::json& position) = 0;

  double base_lr_;

 private:
  std::string type_;
  WarmupFields warmup_;
};

// base_lr * factor^k, k growing by one each `step` updates, not below stop_factor_lr.
class FactorScheduler : public LRScheduler {
 public:
  FactorScheduler(const FactorSchedulerParams& p, double base_lr);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }

 private:
  double decayed(int64_t num_update) override;
  nlohmann::json position() const override;
  void set_position(const nlohmann::json& position) override;

  FactorSchedulerParams p_;
  int64_t count_ = 0;
  double lr_;
};

// base_lr * factor^k after the k-th listed step has passed.
class MultiFactorScheduler : public LRScheduler {
 public:
  MultiFactorScheduler(const MultiFactorSchedulerParams& p, double base_lr);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }

 private:
  double decayed(int64_t num_update) override;
  nlohmann::json position() const override;
  void set_position(const nlohmann::json& position) override;

  MultiFactorSchedulerParams p_;
  int cur_step_ind_ = 0;
  int64_t count_ = 0;
  double lr_;
};

// final_lr + (base_lr - final_lr) * (1 - (n - warmup) / (max_update - warmup))^pwr.
class PolyScheduler : public LRScheduler {
 public:
  PolyScheduler(const PolySchedulerParams& p, double base_lr);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }

 private:
  double decayed(int64_t num_update) override;
  nlohmann::json position() const override;
  void set_position(const nlohmann::json& position) override;

  PolySchedulerParams p_;
  double lr_;
};

// final_lr + (base_lr - final_lr) * (1 + cos(pi * (n - warmup) / (max_update - warmup))) / 2.
class CosineScheduler : public LRScheduler {
 public:
  CosineScheduler(const CosineSchedulerParams& p, double base_lr);
  std::map<std::string, std::string> params() const override { return p_.to_strings(); }

 private:
  double decayed(int64_t num_update) override;
  nlohmann::json position() const override;
  void set_position(const nlohmann::json& position) override;

  CosineSchedulerParams p_;
  double lr_;
};

// The schedule types: "factor", "multifactor", "poly", "cosine".
std::vector<std::string> lr_scheduler_types();

// Builds a schedule from its type and parameters (MXNet's names); base_lr is
// the optimizer's learning rate. Unknown types, unknown parameters and bad
// values throw InputError naming them and what is allowed.
std::unique_ptr<LRScheduler> make_lr_scheduler(const std::string& type,
                                               const std::map<std::string, std::string>& params,
                                               double base_lr);

}  // namespace mx::optim
