#include "train/predict_progress.h"

#include <algorithm>

namespace mx::train {

PredictProgress::PredictProgress(std::string what, std::optional<int64_t> total_batches,
                                 ProgressDisplay display, double quiet_seconds,
                                 double plain_interval)
    : what_(std::move(what)),
      total_(total_batches),
      display_(std::move(display)),
      quiet_seconds_(quiet_seconds),
      plain_interval_(plain_interval),
      start_(display_.now()) {}

void PredictProgress::batch_done(int64_t examples) {
  ++batches_;
  examples_ += examples;
  const double now = display_.now();
  const double seconds = now - start_;
  if (seconds < quiet_seconds_) return;
  bool due = total_ && batches_ >= *total_;
  if (!display_.live() && (!last_plain_ || now - *last_plain_ >= plain_interval_)) due = true;
  if (!display_.wants(due)) return;
  if (due) last_plain_ = now;
  Progress p;
  p.label = what_ + ":";
  p.done = batches_;
  p.total = total_;
  p.rate = static_cast<double>(examples_) / std::max(seconds, 1e-9);
  p.rate_unit = "examples/s";
  if (total_)
    p.eta = static_cast<double>(std::max<int64_t>(*total_ - batches_, 0)) * seconds /
            static_cast<double>(batches_);
  display_.update(p, due);
}

void PredictProgress::finish() { display_.finish(); }

}  // namespace mx::train
