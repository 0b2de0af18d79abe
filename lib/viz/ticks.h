// Axis ticks at "nice" numbers (1, 2, 2.5 or 5 times a power of ten) that
// cover a data range, and their labels with just enough decimals.
#pragma once

#include <string>
#include <vector>

namespace mx::viz {

struct Ticks {
  double lo = 0, hi = 1;       // the axis range: the first and last tick
  std::vector<double> values;  // lo, lo + step, ..., hi
  double step = 1;
  int decimals = 0;  // digits after the point that tell the ticks apart
};

// Ticks covering [lo, hi] with at most `max_ticks` (at least 2) values. An
// empty or single-valued range is widened around its value; `integer` keeps
// the step a whole number (epochs). Non-finite bounds are an Error.
Ticks nice_ticks(double lo, double hi, int max_ticks = 6, bool integer = false);

// `value` with `decimals` digits after the point; large and small numbers
// in scientific notation ("1e-05").
std::string tick_label(double value, int decimals);

}  // namespace mx::viz
