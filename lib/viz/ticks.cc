#include "viz/ticks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "base/error.h"

namespace mx::viz {

namespace {

// The smallest nice step (1, 2, 2.5, 5 x 10^k) at least `raw`.
double nice_step(double raw) {
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0})
    if (m * magnitude >= raw * (1 - 1e-9)) return m * magnitude;
  return 10 * magnitude;
}

}  // namespace

Ticks nice_ticks(double lo, double hi, int max_ticks, bool integer) {
  if (!std::isfinite(lo) || !std::isfinite(hi))
    throw Error("axis range is not finite: [" + std::to_string(lo) + ", " + std::to_string(hi) +
                "]");
  if (lo > hi) std::swap(lo, hi);
  max_ticks = std::max(max_ticks, 2);
  if (hi - lo <= std::max(std::abs(hi), std::abs(lo)) * 1e-12) {
    // One value: a small range around it (a unit range around 0).
    const double pad = lo == 0 ? 1 : std::abs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  Ticks t;
  t.step = nice_step((hi - lo) / (max_ticks - 1));
  if (integer) t.step = std::max(1.0, std::round(t.step));
  for (;;) {
    t.lo = std::floor(lo / t.step + 1e-9) * t.step;
    t.hi = std::ceil(hi / t.step - 1e-9) * t.step;
    if (std::llround((t.hi - t.lo) / t.step) + 1 <= max_ticks) break;
    t.step = nice_step(t.step * 1.01);
    if (integer) t.step = std::max(1.0, std::round(t.step));
  }
  const long long n = std::llround((t.hi - t.lo) / t.step);
  for (long long i = 0; i <= n; ++i) {
    double v = t.lo + static_cast<double>(i) * t.step;
    if (std::abs(v) < t.step * 1e-9) v = 0;  // no "-0" or 1e-17
    t.values.push_back(v);
  }
  // Decimals: enough for the step (2.5 needs one more than 2).
  const double exponent = std::floor(std::log10(t.step) + 1e-9);
  const double mantissa = t.step / std::pow(10.0, exponent);
  t.decimals = std::max(0, static_cast<int>(-exponent) + (std::abs(mantissa - 2.5) < 1e-6 ? 1 : 0));
  return t;
}

std::string tick_label(double value, int decimals) {
  char buf[64];
  const double a = std::abs(value);
  if (value != 0 && (a >= 1e6 || decimals > 4))
    std::snprintf(buf, sizeof buf, "%.3g", value);
  else
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
  return buf;
}

}  // namespace mx::viz
