#include "train/progress.h"

#include <cmath>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "base/strings.h"

namespace mx::train {

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  int s = static_cast<int>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  return buf;
}

std::string metrics_text(const std::vector<metric::MetricValue>& values,
                         const std::string& prefix) {
  std::ostringstream out;
  for (const auto& v : values)
    out << " " << prefix << v.name << " " << std::fixed << std::setprecision(4) << v.value;
  return out.str();
}

EpochProgress::EpochProgress(int epoch, int epochs, std::optional<int64_t> batches_per_epoch,
                             int log_interval, bool live_bar)
    : epoch_(epoch),
      epochs_(epochs),
      batches_per_epoch_(batches_per_epoch),
      log_interval_(log_interval),
      live_bar_(live_bar) {}

double EpochProgress::seconds() const {
  return std::chrono::duration<double>(Clock::now() - start_).count();
}

void EpochProgress::trained(int samples, const metric::Metric& metric) {
  ++batches_;
  samples_ += samples;
  const bool due = batches_ % log_interval_ == 0 ||
                   (live_bar_ && Clock::now() - last_line_ > std::chrono::milliseconds(250));
  if (!due) return;
  last_line_ = Clock::now();
  const double secs = seconds();
  const double rate = static_cast<double>(samples_) / std::max(secs, 1e-9);
  std::string line = str("epoch ", epoch_ + 1, "/", epochs_, " batch ", batches_);
  if (batches_per_epoch_) {
    const double left =
        static_cast<double>(*batches_per_epoch_ - batches_) * secs / static_cast<double>(batches_);
    line += str("/", *batches_per_epoch_, " ETA ", format_duration(left));
  }
  std::ostringstream rate_text;
  rate_text << std::fixed << std::setprecision(1) << rate;
  line += " " + rate_text.str() + " samples/s" + metrics_text(metric.get_all());
  if (live_bar_)
    std::cerr << "\r" << line << "\033[K" << std::flush;
  else
    std::cerr << line << "\n";
}

void EpochProgress::end_line() const {
  if (live_bar_) std::cerr << "\n";
}

}  // namespace mx::train
