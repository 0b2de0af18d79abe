// train.loss_scale: loss scaling for mixed-precision training. The backward
// pass runs on the loss's gradient times a scale, so that small gradients
// stay representable in float16; the gradients are divided by the scale
// again before the optimizer sees them. A static scale never changes. A
// dynamic one (MXNet's amp LossScaler, PyTorch's GradScaler) skips a step
// whose gradients overflowed and divides the scale by `factor`, and
// multiplies it by `factor` after `growth_interval` good steps in a row.
// This file holds the settings and the scale's bookkeeping; the graph
// (loss_scale_graph.h) and the gradients (scaled_gradients.h) are elsewhere.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "train/config.h"
#include "train/precision.h"

namespace mx::train {

struct LossScaleSettings {
  enum class Kind { kNone, kStatic, kDynamic };
  Kind kind = Kind::kNone;
  double init = 65536;  // 2^16, MXNet's and PyTorch's start
  int64_t growth_interval = 2000;
  double factor = 2;
  bool on() const { return kind != Kind::kNone; }
};

// The lowest scale a back-off may reach: float16's smallest subnormal. A
// dynamic scale that would go below it means every gradient is non-finite
// whatever the scale (NaN from the data or the weights): the run stops.
inline constexpr double kMinLossScale = 1.0 / (1 << 24);

// The config keys: train.loss_scale and train.loss_scale.{type, init,
// growth_interval, factor}.
const std::vector<std::string>& loss_scale_keys();

// Reads train.loss_scale: `none`, `dynamic`, a positive number (static) or
// a mapping {type: dynamic, init, growth_interval, factor}. Without it:
// dynamic for float16, none otherwise. Bad values are InputErrors naming
// the key's origin; `dist` (a dist kvstore) refuses any scaling, as the
// workers would have to agree on every skipped step.
LossScaleSettings parse_loss_scale(const Config& config, Precision precision, bool dist);

// What a checkpoint keeps of a scaler, to resume exactly.
struct LossScaleState {
  double scale = 1;
  int64_t good_steps = 0;  // finite steps since the last change of the scale
  int64_t skipped_steps = 0;
};

// " loss-scale S skipped N", the progress line's and the epoch line's tail.
std::string loss_scale_text(double scale, int64_t skipped_steps);

class LossScaler {
 public:
  LossScaler() = default;
  explicit LossScaler(const LossScaleSettings& settings);

  bool on() const { return settings_.on(); }
  // Whether steps are checked for overflow and may be skipped.
  bool dynamic() const { return settings_.kind == LossScaleSettings::Kind::kDynamic; }
  double scale() const { return state_.scale; }
  int64_t skipped_steps() const { return state_.skipped_steps; }

  // After a step's backward pass: `finite` says whether every gradient was
  // finite. Returns whether the optimizer applies the step. `step` (1-based,
  // of the run) names the step in the error when the scale would fall below
  // kMinLossScale. A static scaler applies every step.
  bool after_backward(bool finite, int64_t step);

  LossScaleState state() const { return state_; }
  // A resumed run's scaler: a static one keeps its configured scale.
  void restore(const LossScaleState& state);

 private:
  LossScaleSettings settings_;
  LossScaleState state_;
};

}  // namespace mx::train
