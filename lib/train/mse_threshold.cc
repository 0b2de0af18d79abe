#include "train/mse_threshold.h"

#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"

namespace mx::train {

MseThreshold mse_threshold(const Histogram& histogram, int steps) {
  MX_CHECK(steps > 0, "MSE calibration needs a positive number of steps");
  const size_t bins = histogram.counts.size();
  const size_t zero = bins / 2;
  const double width = 2 * histogram.limit / static_cast<double>(bins);
  // Fold the histogram onto magnitudes: bin m holds |x| around m * width.
  const size_t half = bins - zero;
  std::vector<double> count(half, 0.0);
  for (size_t j = 0; j < bins; ++j)
    count[j >= zero ? j - zero : zero - j] += static_cast<double>(histogram.counts[j]);
  // Prefix sums of count, count * x and count * x^2 make each candidate O(1).
  std::vector<double> s0(half + 1, 0.0), s1(half + 1, 0.0), s2(half + 1, 0.0);
  for (size_t m = 0; m < half; ++m) {
    const double x = static_cast<double>(m) * width;
    s0[m + 1] = s0[m] + count[m];
    s1[m + 1] = s1[m] + count[m] * x;
    s2[m + 1] = s2[m] + count[m] * x * x;
  }
  const double total = s0[half];
  if (total == 0 || width <= 0) return {histogram.limit, 0};
  MseThreshold best{histogram.limit, std::numeric_limits<double>::infinity()};
  for (size_t k = 0; k < half; ++k) {
    const double t = (static_cast<double>(k) + 0.5) * width;  // bin k's upper edge
    const double step = t / steps;
    // Bins below `rounds_to_zero` lie within half a step of zero.
    const auto rounds_to_zero = std::min(k + 1, static_cast<size_t>(std::ceil(0.5 * step / width)));
    const double inside =
        s2[rounds_to_zero] + (s0[k + 1] - s0[rounds_to_zero]) * step * step / 12.0;
    const double above_n = s0[half] - s0[k + 1];
    const double above_x = s1[half] - s1[k + 1];
    const double above_xx = s2[half] - s2[k + 1];
    const double clipped = above_xx - 2 * t * above_x + t * t * above_n;
    const double error = (inside + clipped) / total;
    if (error < best.error) best = {t, error};
  }
  return best;
}

}  // namespace mx::train
