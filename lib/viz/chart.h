// The chart model: a titled figure of panels, each with its series, axis
// labels (with units) and legend. It knows nothing of drawing: the Cairo
// renderer (chart_render.h) draws it to PNG or SVG.
#pragma once

#include <string>
#include <vector>

#include "viz/ticks.h"

namespace mx::viz {

struct Point {
  double x = 0, y = 0;
};

enum class LineStyle { kSolid, kDashed };

struct Series {
  std::string name;  // the legend entry; empty: not in the legend
  std::vector<Point> points;
  int color = 0;  // index into the palette
  LineStyle style = LineStyle::kSolid;
  bool markers = true;  // a dot at each point (epoch values); false for dense points
  double width = 2;     // line width in pixels
  double opacity = 1;   // below 1: a light line behind the others (the points between epochs)
};

struct Panel {
  std::string title;
  std::string x_label = "epoch";
  std::string y_label;  // with its unit, e.g. "accuracy (%)"
  bool integer_x = true;
  std::vector<Series> series;
  // A logarithmic y axis with ticks at powers of ten (a learning rate that
  // falls by decades); values <= 0 are not drawn on it.
  bool log_y = false;
  bool show_legend = true;  // false where the chart's shared legend names the series
};

struct LegendEntry {
  std::string name;
  int color = 0;
  LineStyle style = LineStyle::kSolid;
  double width = 2.5;  // of the swatch
  double opacity = 1;
};

struct Chart {
  std::string title;
  std::string subtitle;  // lines separated by '\n'
  // A legend under the subtitle for every panel (runs compared); empty: each
  // panel has its own.
  std::vector<LegendEntry> legend;
  std::vector<Panel> panels;
  int columns = 2;
  int width = 1200;        // pixels (PNG) or points (SVG)
  int panel_height = 380;  // the height of the whole is measured by the renderer
};

// The range a panel's axes show: its finite points (an Error if it has none).
struct Range {
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
};
Range data_range(const Panel& panel);
// Whether the panel has any finite point to draw.
bool has_data(const Panel& panel);

// The legend: each named series once, in order.
std::vector<LegendEntry> legend_entries(const Panel& panel);

// The palette colour `index` (wrapping around) as 0..1 RGB.
struct Rgb {
  double r, g, b;
};
Rgb palette_color(int index);

}  // namespace mx::viz
