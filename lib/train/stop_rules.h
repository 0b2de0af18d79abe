// When a run stops before its last epoch: train.max_time (a time budget,
// "90s", "30m", "2h", "1h30m"; checked at batch boundaries, the run stops
// with a checkpoint it can resume from) and train.early_stop ({metric,
// patience, min_delta, mode}: the run stops with a checkpoint once the
// metric has not improved by more than min_delta for `patience` epochs).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metric/metric.h"
#include "train/config.h"

namespace mx::train {

struct EarlyStopSettings {
  std::string split = "val";  // "val" or "train": whose figures are watched
  std::string metric;         // the metric's own name, e.g. "accuracy", "cross-entropy"
  int patience = 3;           // epochs without improvement before stopping
  double min_delta = 0;       // an improvement must be larger than this
  bool maximize = true;       // mode max (accuracy) or min (losses)

  std::string label() const { return split + "-" + metric; }
};

struct StopSettings {
  std::optional<double> max_seconds;  // train.max_time
  std::optional<EarlyStopSettings> early_stop;
};

// "90s", "30m", "2h", "1h30m", "1.5h" or a number of seconds; throws
// InputError (without a place) for anything else or a time that is not
// positive.
double parse_duration(const std::string& text);

// Whether larger values of a metric (by its own name) are better: accuracy
// yes, losses and errors no; nullopt when the name does not say.
std::optional<bool> metric_maximizes(const std::string& name);

// The config's keys for these rules, for Config::check_keys.
std::vector<std::string> stop_setting_keys();

// Reads train.max_time and train.early_stop; `metric_names` are the run's
// train.metrics. Bad values are InputErrors naming their place.
StopSettings parse_stop_settings(const Config& config,
                                 const std::vector<std::string>& metric_names);

// Tracks the watched metric epoch by epoch.
class EarlyStop {
 public:
  explicit EarlyStop(EarlyStopSettings settings) : s_(std::move(settings)) {}

  // After epoch `epoch` (1-based): the reason to stop now, if the metric has
  // not improved for `patience` epochs.
  std::optional<std::string> after_epoch(int epoch,
                                         const std::vector<metric::MetricValue>& train_values,
                                         const std::vector<metric::MetricValue>& val_values);
  int best_epoch() const { return best_epoch_; }
  double best_value() const { return best_; }

 private:
  EarlyStopSettings s_;
  int best_epoch_ = 0;  // 0: none yet
  double best_ = 0;
  int stale_ = 0;  // epochs since the best
};

}  // namespace mx::train
