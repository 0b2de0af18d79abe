// mx-predict's progress over a large input: the shared progress line
// (base/progress_bar.h) with batches, examples/s and the time left. Quiet
// for inputs that take less than `quiet_seconds`, so predicting a few
// images prints nothing but the predictions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "base/progress_bar.h"

namespace mx::train {

class PredictProgress {
 public:
  PredictProgress(std::string what, std::optional<int64_t> total_batches,
                  ProgressDisplay display = ProgressDisplay::on_stderr(), double quiet_seconds = 2,
                  double plain_interval = 5);
  ~PredictProgress() { finish(); }
  PredictProgress(const PredictProgress&) = delete;
  PredictProgress& operator=(const PredictProgress&) = delete;

  // A batch of `examples` done.
  void batch_done(int64_t examples);
  void finish();

 private:
  std::string what_;
  std::optional<int64_t> total_;
  ProgressDisplay display_;
  double quiet_seconds_, plain_interval_;
  double start_;
  std::optional<double> last_plain_;
  int64_t batches_ = 0, examples_ = 0;
};

}  // namespace mx::train
