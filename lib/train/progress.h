// What a training run shows while it runs: a progress line every
// log_interval batches (or a live bar on a terminal) with the batch, the
// samples per second, the time left and the running metrics; and the text
// pieces of the end-of-epoch line.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metric/metric.h"

namespace mx::train {

// "m:ss" or "h:mm:ss"; "--:--" for an unknown time.
std::string format_duration(double seconds);
// " NAME VALUE" per metric, each name after `prefix`.
std::string metrics_text(const std::vector<metric::MetricValue>& values,
                         const std::string& prefix = "");

// One epoch's batches, samples and time, and its progress lines on stderr.
class EpochProgress {
 public:
  // `batches_per_epoch`: known after the first epoch, for the time left.
  EpochProgress(int epoch, int epochs, std::optional<int64_t> batches_per_epoch, int log_interval,
                bool live_bar);

  // A batch a resumed run had already trained.
  void skip() { ++batches_; }
  // A trained batch of `samples` real samples; prints a line when due.
  void trained(int samples, const metric::Metric& metric);
  // Ends the live bar's line.
  void end_line() const;

  int64_t batches() const { return batches_; }
  int64_t samples() const { return samples_; }
  double seconds() const;

 private:
  using Clock = std::chrono::steady_clock;
  int epoch_, epochs_;
  std::optional<int64_t> batches_per_epoch_;
  int log_interval_;
  bool live_bar_;
  Clock::time_point start_ = Clock::now(), last_line_ = Clock::now();
  int64_t batches_ = 0, samples_ = 0;
};

}  // namespace mx::train
