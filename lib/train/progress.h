// What a training run shows while it runs: a progress line every
// log_interval batches (or a live bar on a terminal, base/progress_bar.h)
// with the batch, the samples per second, the time left of the epoch and of
// the run and the running metrics; and the text pieces of the end-of-epoch
// line.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/progress_bar.h"
#include "metric/metric.h"

namespace mx::train {

// " NAME VALUE" per metric, each name after `prefix`.
std::string metrics_text(const std::vector<metric::MetricValue>& values,
                         const std::string& prefix = "");

// The running training metrics at the end of a log interval, for the run's
// record of them (interval_record.h).
struct IntervalPoint {
  int epoch = 0;      // 0-based
  int64_t batch = 0;  // batches of the epoch done, skipped ones included
  std::optional<int64_t> batches_per_epoch;
  int log_interval = 1;
  std::vector<metric::MetricValue> running;
  // With train.loss_scale: the scale and the steps skipped so far in the run.
  std::optional<double> loss_scale;
  int64_t skipped_steps = 0;
};

// One epoch's batches, samples and time, and its progress lines.
class EpochProgress {
 public:
  // `batches_per_epoch`: when known (from the iterator or the first epoch),
  // for the bar and the time left.
  EpochProgress(int epoch, int epochs, std::optional<int64_t> batches_per_epoch, int log_interval,
                ProgressDisplay display);
  // An error in the middle of an epoch ends the bar's line before its message.
  ~EpochProgress() { display_.finish(); }
  EpochProgress(const EpochProgress&) = delete;
  EpochProgress& operator=(const EpochProgress&) = delete;

  // A batch a resumed run had already trained.
  void skip() { ++batches_; }
  // A trained batch of `samples` real samples; shows a line when due.
  void trained(int samples, const metric::Metric& metric);
  // With train.loss_scale, the lines show the scale and the skipped steps
  // (the run's, set before each trained()).
  void set_loss_scale(double scale, int64_t skipped_steps) {
    loss_scale_ = scale;
    skipped_steps_ = skipped_steps;
  }
  // Ends the live bar's line.
  void end_line();
  // Called with the running metrics every log_interval trained batches.
  void on_interval(std::function<void(const IntervalPoint&)> hook) {
    on_interval_ = std::move(hook);
  }

  int64_t batches() const { return batches_; }
  int64_t samples() const { return samples_; }
  double seconds() const;

  // The line `trained` would show now (for tests and the first draw).
  Progress progress(const std::vector<metric::MetricValue>& running) const;

 private:
  int epoch_, epochs_;
  std::optional<int64_t> batches_per_epoch_;
  int log_interval_;
  ProgressDisplay display_;
  std::function<void(const IntervalPoint&)> on_interval_;
  double start_;
  int64_t batches_ = 0, trained_ = 0, samples_ = 0;
  std::optional<double> loss_scale_;
  int64_t skipped_steps_ = 0;
};

}  // namespace mx::train
