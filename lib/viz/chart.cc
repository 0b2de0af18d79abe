#include "viz/chart.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"

namespace mx::viz {

bool has_data(const Panel& panel) {
  for (const auto& s : panel.series)
    for (const auto& p : s.points)
      if (std::isfinite(p.x) && std::isfinite(p.y)) return true;
  return false;
}

Range data_range(const Panel& panel) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  Range r{inf, -inf, inf, -inf};
  for (const auto& s : panel.series)
    for (const auto& p : s.points) {
      if (!std::isfinite(p.x) || !std::isfinite(p.y)) continue;
      r.x_lo = std::min(r.x_lo, p.x);
      r.x_hi = std::max(r.x_hi, p.x);
      r.y_lo = std::min(r.y_lo, p.y);
      r.y_hi = std::max(r.y_hi, p.y);
    }
  if (r.x_lo > r.x_hi) throw Error("panel '" + panel.title + "' has no finite points to draw");
  return r;
}

std::vector<LegendEntry> legend_entries(const Panel& panel) {
  std::vector<LegendEntry> entries;
  for (const auto& s : panel.series) {
    if (s.name.empty()) continue;
    const bool seen = std::any_of(entries.begin(), entries.end(),
                                  [&](const LegendEntry& e) { return e.name == s.name; });
    if (!seen) entries.push_back({s.name, s.color, s.style, s.width + 0.5, s.opacity});
  }
  return entries;
}

Rgb palette_color(int index) {
  // Tableau 10: distinct, and readable on white.
  static constexpr Rgb colors[] = {
      {0.122, 0.467, 0.706}, {1.000, 0.498, 0.055}, {0.173, 0.627, 0.173}, {0.839, 0.153, 0.157},
      {0.580, 0.404, 0.741}, {0.549, 0.337, 0.294}, {0.890, 0.467, 0.761}, {0.498, 0.498, 0.498},
      {0.737, 0.741, 0.133}, {0.090, 0.745, 0.812}};
  constexpr int n = static_cast<int>(std::size(colors));
  return colors[((index % n) + n) % n];
}

}  // namespace mx::viz
