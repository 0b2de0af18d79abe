#include "train/loss_scaler.h"

#include <cmath>
#include <limits>

#include "base/error.h"
#include "base/param_value.h"
#include "base/strings.h"

namespace mx::train {
namespace {

// The scale reaches the graph as a float32 array.
constexpr double kMaxLossScale = std::numeric_limits<float>::max();

const char* const kKey = "train.loss_scale";

// A positive, finite number that float32 holds, or an InputError at `key`.
double positive_scale(const Config& c, const std::string& key, const std::string& text) {
  double v = 0;
  try {
    v = param_value::parse_double(text);
  } catch (const InputError&) {
    throw InputError(str(c.origin(key), ": ", key,
                         " must be none, dynamic, a positive number or a mapping {type: dynamic, "
                         "init, growth_interval, factor}, not '",
                         text, "'"));
  }
  if (!std::isfinite(v) || v <= 0 || v > kMaxLossScale)
    throw InputError(str(c.origin(key), ": ", key, " must be a positive finite number up to ",
                         kMaxLossScale, " (float32's largest), not ", text));
  return v;
}

LossScaleSettings dynamic_settings(const Config& c) {
  LossScaleSettings s;
  s.kind = LossScaleSettings::Kind::kDynamic;
  const std::string init = std::string(kKey) + ".init";
  if (c.has(init)) s.init = positive_scale(c, init, c.get_string(init, ""));
  const std::string interval = std::string(kKey) + ".growth_interval";
  s.growth_interval = c.get_int(interval, s.growth_interval);
  if (s.growth_interval < 1)
    throw InputError(str(c.origin(interval), ": ", interval,
                         " must be at least 1 (good steps before the scale grows), not ",
                         s.growth_interval));
  const std::string factor = std::string(kKey) + ".factor";
  s.factor = c.get_double(factor, s.factor);
  if (!std::isfinite(s.factor) || s.factor <= 1)
    throw InputError(str(c.origin(factor), ": ", factor,
                         " must be a finite number above 1 (the scale is divided and multiplied "
                         "by it), not ",
                         c.get_string(factor, "")));
  return s;
}

}  // namespace

const std::vector<std::string>& loss_scale_keys() {
  static const std::vector<std::string> keys = {
      "train.loss_scale", "train.loss_scale.type", "train.loss_scale.init",
      "train.loss_scale.growth_interval", "train.loss_scale.factor"};
  return keys;
}

LossScaleSettings parse_loss_scale(const Config& c, Precision precision, bool dist) {
  const std::string type_key = std::string(kKey) + ".type";
  const bool mapping = c.section(kKey).size() > 0;
  std::string where = c.has(kKey) ? kKey : type_key;
  // A mapping without a type is dynamic (its keys are dynamic's).
  std::string kind = c.has(kKey)                        ? c.get_string(kKey, "")
                     : mapping                          ? c.get_string(type_key, "dynamic")
                     : precision == Precision::kFloat16 ? "dynamic"
                                                        : "none";
  LossScaleSettings s;
  if (kind == "none") {
    s.kind = LossScaleSettings::Kind::kNone;
  } else if (kind == "dynamic") {
    s = dynamic_settings(c);
  } else {
    s.kind = LossScaleSettings::Kind::kStatic;
    s.init = positive_scale(c, where, kind);
  }
  // init, growth_interval and factor are dynamic's; elsewhere they would be
  // silently ignored (a `train.loss_scale=none` override of a mapping sets
  // its type and keeps them, which is not a mistake).
  if (s.kind == LossScaleSettings::Kind::kStatic)
    for (const char* k : {".init", ".growth_interval", ".factor"})
      if (c.has(kKey + std::string(k)))
        throw InputError(str(c.origin(kKey + std::string(k)), ": ", kKey, k,
                             " applies to train.loss_scale type dynamic, not to a static scale (",
                             kind, ")"));
  if (s.on() && dist)
    throw InputError(
        str(c.has(kKey) || mapping ? c.origin(where) : c.origin("train.precision"),
            ": train.loss_scale ", kind,
            " is not available with a dist kvstore (the workers would have to "
            "agree on every skipped step); use train.loss_scale: none",
            precision == Precision::kFloat16 ? " (float16 scales dynamically unless told)" : ""));
  return s;
}

std::string loss_scale_text(double scale, int64_t skipped_steps) {
  return str(" loss-scale ", scale, " skipped ", skipped_steps);
}

LossScaler::LossScaler(const LossScaleSettings& settings) : settings_(settings) {
  state_.scale = settings.on() ? settings.init : 1.0;
}

bool LossScaler::after_backward(bool finite, int64_t step) {
  if (!dynamic()) return true;
  if (!finite) {
    const double lower = state_.scale / settings_.factor;
    if (lower < kMinLossScale)
      throw Error(str("step ", step, ": the gradients are not finite even with the loss scale at ",
                      state_.scale, " (train.loss_scale would go below its floor ", kMinLossScale,
                      "): NaN or infinity comes from the data or the weights, not from an "
                      "overflow. Check the data, or try a smaller learning rate"));
    state_.scale = lower;
    state_.good_steps = 0;
    ++state_.skipped_steps;
    return false;
  }
  if (++state_.good_steps >= settings_.growth_interval) {
    state_.good_steps = 0;
    // float32 holds the scale: it stays where growing would overflow it.
    if (state_.scale * settings_.factor <= kMaxLossScale) state_.scale *= settings_.factor;
  }
  return true;
}

void LossScaler::restore(const LossScaleState& state) {
  if (!on()) return;
  const double configured = state_.scale;
  state_ = state;
  if (!dynamic()) state_.scale = configured;
}

}  // namespace mx::train
