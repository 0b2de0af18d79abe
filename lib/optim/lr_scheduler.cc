#include "optim/lr_scheduler.h"

#include <cmath>
#include <nlohmann/json.hpp>
#include <numbers>

#include "base/error.h"
#include "base/param_value.h"
#include "base/strings.h"

namespace mx::optim {

namespace {

template <typename P>
void declare_warmup(ParamDecl<P>& d) {
  d.field("warmup_steps", static_cast<int64_t P::*>(&WarmupFields::warmup_steps))
      .set_default(0)
      .set_lower_bound(0)
      .describe("number of updates at the start during which the rate warms up");
  d.field("warmup_begin_lr", static_cast<double P::*>(&WarmupFields::warmup_begin_lr))
      .set_default(0.0)
      .set_lower_bound(0.0)
      .describe("learning rate at the start of the warm-up");
  d.field("warmup_mode", static_cast<WarmupMode P::*>(&WarmupFields::warmup_mode))
      .set_default(WarmupMode::kLinear)
      .add_enum("linear", WarmupMode::kLinear)
      .add_enum("constant", WarmupMode::kConstant)
      .describe("linear: rise in equal steps to the base rate; constant: stay at warmup_begin_lr");
}

// MXNet's LRScheduler checks, with the parameter named.
void check_warmup(const std::string& type, const WarmupFields& w, double base_lr) {
  if (w.warmup_begin_lr > base_lr)
    throw InputError(str("lr_scheduler '", type, "': warmup_begin_lr (",
                         param_value::print_double(w.warmup_begin_lr),
                         ") must not exceed the base learning rate (",
                         param_value::print_double(base_lr), ")"));
}

double json_number(const nlohmann::json& j, const char* key, const std::string& source) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number())
    throw InputError(source + ": learning-rate schedule state lacks the number '" + key + "'");
  return j[key].get<double>();
}

}  // namespace

void FactorSchedulerParams::declare(ParamDecl<FactorSchedulerParams>& d) {
  d.field("step", &FactorSchedulerParams::step)
      .set_lower_bound(1)
      .describe("the rate is multiplied by factor every `step` updates");
  d.field("factor", &FactorSchedulerParams::factor)
      .set_default(1.0)
      .set_range(0.0, 1.0)
      .describe("multiplier applied every `step` updates");
  d.field("stop_factor_lr", &FactorSchedulerParams::stop_factor_lr)
      .set_default(1e-8)
      .set_lower_bound(0.0)
      .describe("the rate does not go below this");
  declare_warmup(d);
}

void MultiFactorSchedulerParams::declare(ParamDecl<MultiFactorSchedulerParams>& d) {
  d.field("step", &MultiFactorSchedulerParams::step)
      .describe("increasing update counts after which the rate is multiplied by factor");
  d.field("factor", &MultiFactorSchedulerParams::factor)
      .set_default(1.0)
      .set_range(0.0, 1.0)
      .describe("multiplier applied after each listed step");
  declare_warmup(d);
}

void PolySchedulerParams::declare(ParamDecl<PolySchedulerParams>& d) {
  d.field("max_update", &PolySchedulerParams::max_update)
      .set_lower_bound(1)
      .describe("number of updates after which the rate stays at final_lr");
  d.field("pwr", &PolySchedulerParams::pwr)
      .set_default(2.0)
      .set_lower_bound(0.0)
      .describe("power of the polynomial decay");
  d.field("final_lr", &PolySchedulerParams::final_lr)
      .set_default(0.0)
      .set_lower_bound(0.0)
      .describe("rate at max_update and after");
  declare_warmup(d);
}

void CosineSchedulerParams::declare(ParamDecl<CosineSchedulerParams>& d) {
  d.field("max_update", &CosineSchedulerParams::max_update)
      .set_lower_bound(1)
      .describe("number of updates after which the rate stays at final_lr");
  d.field("final_lr", &CosineSchedulerParams::final_lr)
      .set_default(0.0)
      .set_lower_bound(0.0)
      .describe("rate at max_update and after");
  declare_warmup(d);
}

// --- LRScheduler -------------------------------------------------------------

LRScheduler::LRScheduler(std::string type, double base_lr, const WarmupFields& warmup)
    : base_lr_(base_lr), type_(std::move(type)), warmup_(warmup) {
  check_warmup(type_, warmup_, base_lr_);
}

double LRScheduler::operator()(int64_t num_update) {
  if (num_update < warmup_.warmup_steps) {
    if (warmup_.warmup_mode == WarmupMode::kConstant) return warmup_.warmup_begin_lr;
    // Same operation order as MXNet's get_warmup_lr, so the doubles agree.
    const double increase = (base_lr_ - warmup_.warmup_begin_lr) * static_cast<double>(num_update) /
                            static_cast<double>(warmup_.warmup_steps);
    return warmup_.warmup_begin_lr + increase;
  }
  return decayed(num_update);
}

nlohmann::json LRScheduler::state() const {
  nlohmann::json j;
  j["type"] = type_;
  j["base_lr"] = base_lr_;
  j["params"] = params();
  j["position"] = position();
  return j;
}

void LRScheduler::load_state(const nlohmann::json& state, const std::string& source) {
  if (!state.is_object() || !state.contains("type") || !state["type"].is_string())
    throw InputError(source + ": learning-rate schedule state has no 'type'");
  const auto saved = state["type"].get<std::string>();
  if (saved != type_)
    throw InputError(source + ": the saved learning-rate schedule is '" + saved +
                     "' but this run uses '" + type_ + "'");
  if (!state.contains("position"))
    throw InputError(source + ": learning-rate schedule state has no 'position'");
  set_position(state["position"]);
}

// --- factor ------------------------------------------------------------------

FactorScheduler::FactorScheduler(const FactorSchedulerParams& p, double base_lr)
    : LRScheduler("factor", base_lr, p), p_(p), lr_(base_lr) {}

double FactorScheduler::decayed(int64_t num_update) {
  while (num_update > count_ + p_.step) {
    count_ += p_.step;
    lr_ *= p_.factor;
    if (lr_ < p_.stop_factor_lr) lr_ = p_.stop_factor_lr;
  }
  return lr_;
}

nlohmann::json FactorScheduler::position() const { return {{"count", count_}, {"lr", lr_}}; }

void FactorScheduler::set_position(const nlohmann::json& j) {
  const double count = json_number(j, "count", "factor schedule");
  lr_ = json_number(j, "lr", "factor schedule");
  count_ = static_cast<int64_t>(count);
}

// --- multifactor ---------------------------------------------------------------

MultiFactorScheduler::MultiFactorScheduler(const MultiFactorSchedulerParams& p, double base_lr)
    : LRScheduler("multifactor", base_lr, p), p_(p), lr_(base_lr) {
  if (p_.step.ndim() < 1)
    throw InputError("lr_scheduler 'multifactor': parameter 'step' must list at least one update");
  for (int i = 0; i < p_.step.ndim(); ++i) {
    if (p_.step[i] < 1)
      throw InputError(str("lr_scheduler 'multifactor': parameter 'step' ", p_.step.to_string(),
                           ": every step must be >= 1"));
    if (i > 0 && p_.step[i] <= p_.step[i - 1])
      throw InputError(str("lr_scheduler 'multifactor': parameter 'step' ", p_.step.to_string(),
                           " must be strictly increasing"));
  }
}

double MultiFactorScheduler::decayed(int64_t num_update) {
  while (cur_step_ind_ < p_.step.ndim()) {
    if (num_update <= p_.step[cur_step_ind_]) return lr_;
    count_ = p_.step[cur_step_ind_];
    ++cur_step_ind_;
    lr_ *= p_.factor;
  }
  return lr_;
}

nlohmann::json MultiFactorScheduler::position() const {
  return {{"cur_step_ind", cur_step_ind_}, {"count", count_}, {"lr", lr_}};
}

void MultiFactorScheduler::set_position(const nlohmann::json& j) {
  const double ind = json_number(j, "cur_step_ind", "multifactor schedule");
  if (ind < 0 || ind > p_.step.ndim())
    throw InputError(str("multifactor schedule state: cur_step_ind ", ind, " is outside [0, ",
                         p_.step.ndim(), "]"));
  const double count = json_number(j, "count", "multifactor schedule");
  lr_ = json_number(j, "lr", "multifactor schedule");
  cur_step_ind_ = static_cast<int>(ind);
  count_ = static_cast<int64_t>(count);
}

// --- poly and cosine -------------------------------------------------------------

namespace {
void check_max_update(const char* type, int64_t max_update, int64_t warmup_steps) {
  if (max_update <= warmup_steps)
    throw InputError(str("lr_scheduler '", type, "': max_update (", max_update,
                         ") must be larger than warmup_steps (", warmup_steps, ")"));
}
}  // namespace

PolyScheduler::PolyScheduler(const PolySchedulerParams& p, double base_lr)
    : LRScheduler("poly", base_lr, p), p_(p), lr_(base_lr) {
  check_max_update("poly", p_.max_update, p_.warmup_steps);
}

double PolyScheduler::decayed(int64_t num_update) {
  // Past max_update MXNet keeps the last rate it computed.
  if (num_update <= p_.max_update) {
    const double max_steps = static_cast<double>(p_.max_update - p_.warmup_steps);
    lr_ = p_.final_lr +
          (base_lr_ - p_.final_lr) *
              std::pow(1 - static_cast<double>(num_update - p_.warmup_steps) / max_steps, p_.pwr);
  }
  return lr_;
}

nlohmann::json PolyScheduler::position() const { return {{"lr", lr_}}; }
void PolyScheduler::set_position(const nlohmann::json& j) {
  lr_ = json_number(j, "lr", "poly schedule");
}

CosineScheduler::CosineScheduler(const CosineSchedulerParams& p, double base_lr)
    : LRScheduler("cosine", base_lr, p), p_(p), lr_(base_lr) {
  check_max_update("cosine", p_.max_update, p_.warmup_steps);
}

double CosineScheduler::decayed(int64_t num_update) {
  if (num_update <= p_.max_update) {
    const double max_steps = static_cast<double>(p_.max_update - p_.warmup_steps);
    lr_ = p_.final_lr +
          (base_lr_ - p_.final_lr) *
              (1 + std::cos(std::numbers::pi * static_cast<double>(num_update - p_.warmup_steps) /
                            max_steps)) /
              2;
  }
  return lr_;
}

nlohmann::json CosineScheduler::position() const { return {{"lr", lr_}}; }
void CosineScheduler::set_position(const nlohmann::json& j) {
  lr_ = json_number(j, "lr", "cosine schedule");
}

// --- factory -------------------------------------------------------------------

std::vector<std::string> lr_scheduler_types() {
  return {"factor", "multifactor", "poly", "cosine"};
}

std::unique_ptr<LRScheduler> make_lr_scheduler(const std::string& type,
                                               const std::map<std::string, std::string>& params,
                                               double base_lr) {
  const std::string owner = "lr_scheduler '" + type + "'";
  const std::string key = to_lower(type);
  if (key == "factor")
    return std::make_unique<FactorScheduler>(FactorSchedulerParams::from_strings(params, owner),
                                             base_lr);
  if (key == "multifactor")
    return std::make_unique<MultiFactorScheduler>(
        MultiFactorSchedulerParams::from_strings(params, owner), base_lr);
  if (key == "poly")
    return std::make_unique<PolyScheduler>(PolySchedulerParams::from_strings(params, owner),
                                           base_lr);
  if (key == "cosine")
    return std::make_unique<CosineScheduler>(CosineSchedulerParams::from_strings(params, owner),
                                             base_lr);
  const auto types = lr_scheduler_types();
  throw InputError("unknown lr_scheduler type '" + type + "'" + did_you_mean(key, types) +
                   "; types are: " + join(types, ", "));
}

}  // namespace mx::optim
