// What a training run says when it ends: its best epoch and that epoch's
// figures, where its checkpoints and curves are, and the mx-predict command
// that uses the best checkpoint (else the last one).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "metric/metric.h"
#include "train/config.h"
#include "train/stop_rules.h"

namespace mx::train {

class RunSummary {
 public:
  // `watch`: the figure that decides the best epoch (early_stop's); without
  // it the first validation metric whose direction is known, else the
  // first such training metric.
  explicit RunSummary(std::optional<EarlyStopSettings> watch = std::nullopt)
      : watch_(std::move(watch)) {}

  void record(int epoch, const std::vector<metric::MetricValue>& train_values,
              const std::vector<metric::MetricValue>& val_values);

  // The summary's lines. `prefix`: the checkpoints' path prefix
  // ("runs/x/model"); `last_checkpoint`: the epoch number of the newest one
  // (-1: none); `inputs`: what to predict on, as mx-predict's arguments.
  std::vector<std::string> lines(const std::string& run_dir, const std::string& prefix,
                                 int last_checkpoint, const std::string& inputs) const;

 private:
  struct Epoch {
    int epoch;
    std::vector<metric::MetricValue> train, val;
  };
  // The best epoch's index in epochs_ and the figure's label ("val-accuracy").
  std::optional<std::pair<size_t, std::string>> best() const;

  std::optional<EarlyStopSettings> watch_;
  std::vector<Epoch> epochs_;
};

// mx-predict's input arguments for a run's validation data (else its
// training data): the IDX images and labels of mnist data, the .rec file of
// record data, else "IMAGE...".
std::string predict_inputs_for(const Config& config);

}  // namespace mx::train
