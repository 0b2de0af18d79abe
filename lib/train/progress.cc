#include "train/progress.h"

#include <algorithm>
#include <iomanip>
#include <sstream>

#include "base/strings.h"
#include "train/loss_scaler.h"

namespace mx::train {

std::string metrics_text(const std::vector<metric::MetricValue>& values,
                         const std::string& prefix) {
  std::ostringstream out;
  for (const auto& v : values)
    out << " " << prefix << v.name << " " << std::fixed << std::setprecision(4) << v.value;
  return out.str();
}

EpochProgress::EpochProgress(int epoch, int epochs, std::optional<int64_t> batches_per_epoch,
                             int log_interval, ProgressDisplay display)
    : epoch_(epoch),
      epochs_(epochs),
      batches_per_epoch_(batches_per_epoch),
      log_interval_(log_interval),
      display_(std::move(display)),
      start_(display_.now()) {}

double EpochProgress::seconds() const { return display_.now() - start_; }

Progress EpochProgress::progress(const std::vector<metric::MetricValue>& running) const {
  Progress p;
  p.label = str("epoch ", epoch_ + 1, "/", epochs_);
  p.done = batches_;
  p.total = batches_per_epoch_;
  const double secs = std::max(seconds(), 1e-9);
  p.rate = static_cast<double>(samples_) / secs;
  // Batches a resumed run skipped took no time: the pace is the trained ones'.
  if (batches_per_epoch_ && trained_ > 0) {
    const double per_batch = secs / static_cast<double>(trained_);
    p.eta = static_cast<double>(std::max<int64_t>(*batches_per_epoch_ - batches_, 0)) * per_batch;
    p.run_eta = *p.eta + static_cast<double>(epochs_ - epoch_ - 1) *
                             static_cast<double>(*batches_per_epoch_) * per_batch;
  }
  p.tail = metrics_text(running);
  if (loss_scale_) p.tail += loss_scale_text(*loss_scale_, skipped_steps_);
  return p;
}

void EpochProgress::trained(int samples, const metric::Metric& metric) {
  ++batches_;
  ++trained_;
  samples_ += samples;
  // The bar shows the epoch's last batch too (a log has the epoch's line next).
  const bool last = batches_per_epoch_ && batches_ == *batches_per_epoch_;
  const bool due = batches_ % log_interval_ == 0 || (last && display_.live());
  const bool interval = on_interval_ && batches_ % log_interval_ == 0;
  // Reading the metric waits for the batch: only when a line may be drawn or recorded.
  const bool show = display_.wants(due);
  if (!show && !interval) return;
  const std::vector<metric::MetricValue> running = metric.get_all();
  if (interval)
    on_interval_({epoch_, batches_, batches_per_epoch_, log_interval_, running, loss_scale_,
                  skipped_steps_});
  if (show) display_.update(progress(running), due);
}

void EpochProgress::end_line() { display_.finish(); }

}  // namespace mx::train
