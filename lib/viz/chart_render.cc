#include "viz/chart_render.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"

#ifdef MX_HAVE_CAIRO
#include <cairo-svg.h>
#include <cairo.h>
#endif

namespace mx::viz {

ImageFormat image_format(const std::string& path, const std::string& what, bool allow_dot) {
  const std::string ext = to_lower(std::filesystem::path(path).extension().string());
  if (ext == ".png") return ImageFormat::kPng;
  if (ext == ".svg") return ImageFormat::kSvg;
  if (allow_dot && ext == ".dot") return ImageFormat::kDot;
  throw InputError(what + " '" + path + "': unknown picture format '" + ext +
                   "'; give a file name ending in .png, .svg" + (allow_dot ? " or .dot" : ""));
}

#ifndef MX_HAVE_CAIRO

bool charts_available() { return false; }

void render_chart(const Chart&, const std::string& path) {
  throw Error("cannot draw '" + path +
              "': mx was built without Cairo (install libcairo2-dev and rebuild)");
}

#else

bool charts_available() { return true; }

namespace {

constexpr const char* kFont = "DejaVu Sans";

struct CairoDeleter {
  void operator()(cairo_t* c) const { cairo_destroy(c); }
  void operator()(cairo_surface_t* s) const { cairo_surface_destroy(s); }
};
using CairoPtr = std::unique_ptr<cairo_t, CairoDeleter>;
using SurfacePtr = std::unique_ptr<cairo_surface_t, CairoDeleter>;

// Text drawing with the chart's one font.
class Painter {
 public:
  explicit Painter(cairo_t* cr) : cr_(cr) {}
  cairo_t* cr() const { return cr_; }

  void font(double size, bool bold = false) const {
    cairo_select_font_face(cr_, kFont, CAIRO_FONT_SLANT_NORMAL,
                           bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr_, size);
  }
  double text_width(const std::string& text) const {
    cairo_text_extents_t e;
    cairo_text_extents(cr_, text.c_str(), &e);
    return e.x_advance;
  }
  // `anchor` 0: left, 0.5: centre, 1: right of x; y is the baseline.
  void text(const std::string& s, double x, double y, double anchor = 0) const {
    cairo_move_to(cr_, x - anchor * text_width(s), y);
    cairo_show_text(cr_, s.c_str());
  }
  void color(Rgb c, double alpha = 1) const { cairo_set_source_rgba(cr_, c.r, c.g, c.b, alpha); }
  void gray(double v) const { cairo_set_source_rgb(cr_, v, v, v); }
  void line_style(LineStyle style, double width) const {
    cairo_set_line_width(cr_, width);
    static const double dashes[] = {7.0, 4.0};
    cairo_set_dash(cr_, dashes, style == LineStyle::kDashed ? 2 : 0, 0);
  }

 private:
  cairo_t* cr_;
};

struct Box {
  double x, y, w, h;
};

// Legend rows: entries placed left to right, wrapping at `width`.
struct LegendItemPlace {
  const LegendEntry* entry;
  double x, row;
};
constexpr double kLegendSwatch = 26, kLegendGap = 16, kLegendRow = 18;

std::vector<LegendItemPlace> place_legend(const Painter& p, const std::vector<LegendEntry>& entries,
                                          double width, int& rows) {
  std::vector<LegendItemPlace> places;
  p.font(12);
  double x = 0;
  int row = 0;
  for (const auto& e : entries) {
    const double w = kLegendSwatch + 6 + p.text_width(e.name);
    if (x > 0 && x + w > width) {
      x = 0;
      ++row;
    }
    places.push_back({&e, x, static_cast<double>(row)});
    x += w + kLegendGap;
  }
  rows = entries.empty() ? 0 : row + 1;
  return places;
}

void draw_polyline(const Painter& p, const Series& s, const std::function<double(double)>& sx,
                   const std::function<double(double)>& sy) {
  cairo_t* cr = p.cr();
  p.color(palette_color(s.color), s.opacity);
  p.line_style(s.style, s.width);
  bool pen_down = false;
  for (const auto& pt : s.points) {
    if (!std::isfinite(pt.x) || !std::isfinite(pt.y) || !std::isfinite(sy(pt.y))) {
      pen_down = false;  // a gap where a value is missing (or cannot be on a log axis)
      continue;
    }
    if (pen_down)
      cairo_line_to(cr, sx(pt.x), sy(pt.y));
    else
      cairo_move_to(cr, sx(pt.x), sy(pt.y));
    pen_down = true;
  }
  cairo_stroke(cr);
  if (!s.markers) return;
  for (const auto& pt : s.points) {
    if (!std::isfinite(pt.x) || !std::isfinite(pt.y) || !std::isfinite(sy(pt.y))) continue;
    cairo_new_sub_path(cr);
    cairo_arc(cr, sx(pt.x), sy(pt.y), s.width + 1.5, 0, 2 * M_PI);
  }
  cairo_fill(cr);
}

void draw_panel(const Painter& p, const Panel& panel, Box box) {
  cairo_t* cr = p.cr();
  // Title, then the legend under it: above the plot, so never over a curve.
  p.font(14, true);
  p.gray(0.1);
  p.text(panel.title, box.x + box.w / 2, box.y + 18, 0.5);
  const auto entries = panel.show_legend ? legend_entries(panel) : std::vector<LegendEntry>{};
  int legend_rows = 0;
  const double legend_width = box.w - 90;
  const auto places = place_legend(p, entries, legend_width, legend_rows);
  const double legend_top = box.y + 28;
  double legend_w = 0;
  for (const auto& pl : places)
    if (pl.row == 0) legend_w = pl.x + kLegendSwatch + 6 + p.text_width(pl.entry->name);
  const double legend_x = box.x + (box.w - std::min(legend_w, legend_width)) / 2;
  for (const auto& pl : places) {
    const double y = legend_top + pl.row * kLegendRow + 9;
    p.color(palette_color(pl.entry->color), pl.entry->opacity);
    p.line_style(pl.entry->style, pl.entry->width);
    cairo_move_to(cr, legend_x + pl.x, y);
    cairo_line_to(cr, legend_x + pl.x + kLegendSwatch, y);
    cairo_stroke(cr);
    p.gray(0.15);
    p.text(pl.entry->name, legend_x + pl.x + kLegendSwatch + 6, y + 4);
  }
  const double top = legend_top + legend_rows * kLegendRow + 10;

  if (!has_data(panel)) {
    p.font(13);
    p.gray(0.4);
    p.text("no values yet", box.x + box.w / 2, box.y + box.h / 2, 0.5);
    return;
  }
  const Range r = data_range(panel);
  const Ticks xt = nice_ticks(r.x_lo, r.x_hi, 9, panel.integer_x);
  // On a log axis the ticks are exponents: 10^-3, 10^-2, ...
  const bool log_y = panel.log_y && r.y_lo > 0;
  const Ticks yt =
      log_y ? nice_ticks(std::floor(std::log10(r.y_lo)), std::ceil(std::log10(r.y_hi)), 6, true)
            : nice_ticks(r.y_lo, r.y_hi, 6);
  auto y_label = [&](double v) {
    if (!log_y) return tick_label(v, yt.decimals);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", std::pow(10.0, v));
    return std::string(buf);
  };
  p.font(12);
  double tick_w = 0;
  for (double v : yt.values) tick_w = std::max(tick_w, p.text_width(y_label(v)));
  const Box plot{box.x + 30 + tick_w + 8, top, 0, 0};
  const double right = box.x + box.w - 22, bottom = box.y + box.h - 48;
  const Box area{plot.x, plot.y, right - plot.x, bottom - plot.y};
  auto sx = [&](double x) { return area.x + (x - xt.lo) / (xt.hi - xt.lo) * area.w; };
  // A tick value (an exponent on a log axis) to a pixel row.
  auto tick_y = [&](double v) { return area.y + area.h - (v - yt.lo) / (yt.hi - yt.lo) * area.h; };
  auto sy = [&](double y) {
    if (!log_y) return tick_y(y);
    return y > 0 ? tick_y(std::log10(y)) : std::numeric_limits<double>::quiet_NaN();
  };

  // Grid and ticks.
  cairo_set_line_width(cr, 1);
  cairo_set_dash(cr, nullptr, 0, 0);
  p.font(12);
  for (double v : yt.values) {
    p.gray(0.88);
    cairo_move_to(cr, area.x, std::round(tick_y(v)) + 0.5);
    cairo_line_to(cr, area.x + area.w, std::round(tick_y(v)) + 0.5);
    cairo_stroke(cr);
    p.gray(0.25);
    p.text(y_label(v), area.x - 6, tick_y(v) + 4, 1);
  }
  for (double v : xt.values) {
    p.gray(0.88);
    cairo_move_to(cr, std::round(sx(v)) + 0.5, area.y);
    cairo_line_to(cr, std::round(sx(v)) + 0.5, area.y + area.h);
    cairo_stroke(cr);
    p.gray(0.25);
    p.text(tick_label(v, xt.decimals), sx(v), area.y + area.h + 17, 0.5);
  }
  p.gray(0.3);
  cairo_rectangle(cr, area.x + 0.5, area.y + 0.5, area.w, area.h);
  cairo_stroke(cr);

  // Axis labels.
  p.font(13);
  p.gray(0.15);
  p.text(panel.x_label, area.x + area.w / 2, area.y + area.h + 38, 0.5);
  cairo_save(cr);
  cairo_translate(cr, box.x + 18, area.y + area.h / 2);
  cairo_rotate(cr, -M_PI / 2);
  p.text(panel.y_label + (log_y ? ", log scale" : ""), 0, 0, 0.5);
  cairo_restore(cr);

  // The series, clipped to the plot area.
  // Clipped a little outside the frame, so that a point on it keeps its whole marker.
  cairo_save(cr);
  cairo_rectangle(cr, area.x - 6, area.y - 6, area.w + 12, area.h + 12);
  cairo_clip(cr);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
  for (const auto& s : panel.series) draw_polyline(p, s, sx, sy);
  cairo_restore(cr);
}

// The header: the title, the subtitle's lines, and the chart's shared legend.
struct Header {
  std::vector<std::string> subtitle;
  std::vector<LegendItemPlace> legend;
  int legend_rows = 0;
  double legend_x = 0, legend_top = 0, height = 0;
};

Header layout_header(const Painter& p, const Chart& chart) {
  Header h;
  std::istringstream lines(chart.subtitle);
  for (std::string line; std::getline(lines, line);) h.subtitle.push_back(line);
  h.legend_top = 50 + 22.0 * static_cast<double>(h.subtitle.size());
  const double width = chart.width - 80;
  h.legend = place_legend(p, chart.legend, width, h.legend_rows);
  double row_w = 0;
  for (const auto& pl : h.legend)
    if (pl.row == 0) row_w = pl.x + kLegendSwatch + 6 + p.text_width(pl.entry->name);
  h.legend_x = (chart.width - std::min(row_w, width)) / 2;
  h.height = h.legend_top + kLegendRow * h.legend_rows + (h.legend_rows > 0 ? 8 : 0);
  return h;
}

// The height of the whole chart, measured with the chart's fonts.
int measured_height(const Chart& chart) {
  SurfacePtr scratch(cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1));
  CairoPtr cr(cairo_create(scratch.get()));
  const Header h = layout_header(Painter(cr.get()), chart);
  const int columns = std::max(1, chart.columns);
  const int rows =
      std::max<int>(1, (static_cast<int>(chart.panels.size()) + columns - 1) / columns);
  return static_cast<int>(std::ceil(h.height)) + rows * chart.panel_height;
}

void draw_chart(cairo_t* cr, const Chart& chart) {
  const Painter p(cr);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  const Header h = layout_header(p, chart);
  p.font(20, true);
  p.gray(0.05);
  p.text(chart.title, chart.width / 2.0, 32, 0.5);
  p.font(14);
  p.gray(0.3);
  for (size_t i = 0; i < h.subtitle.size(); ++i)
    p.text(h.subtitle[i], chart.width / 2.0, 56 + 22.0 * static_cast<double>(i), 0.5);
  for (const auto& pl : h.legend) {
    const double y = h.legend_top + pl.row * kLegendRow + 9;
    p.color(palette_color(pl.entry->color), pl.entry->opacity);
    p.line_style(pl.entry->style, pl.entry->width);
    cairo_move_to(cr, h.legend_x + pl.x, y);
    cairo_line_to(cr, h.legend_x + pl.x + kLegendSwatch, y);
    cairo_stroke(cr);
    p.gray(0.15);
    p.font(12);
    p.text(pl.entry->name, h.legend_x + pl.x + kLegendSwatch + 6, y + 4);
  }
  const int columns = std::max(1, chart.columns);
  const double w = static_cast<double>(chart.width) / columns;
  for (size_t i = 0; i < chart.panels.size(); ++i) {
    const double x = static_cast<double>(i % static_cast<size_t>(columns)) * w;
    const double top =
        h.height + static_cast<double>(i / static_cast<size_t>(columns)) * chart.panel_height;
    draw_panel(p, chart.panels[i], {x + 8, top, w - 16, static_cast<double>(chart.panel_height)});
  }
}

void check(cairo_status_t status, const std::string& path) {
  if (status != CAIRO_STATUS_SUCCESS)
    throw Error("cannot draw '" + path + "': " + cairo_status_to_string(status));
}

// What an SVG reader (or a search) finds as text: Cairo writes glyphs as paths.
std::string svg_description(const Chart& chart) {
  std::string names;
  std::vector<LegendEntry> entries = chart.legend;
  for (const auto& panel : chart.panels)
    for (const auto& e : legend_entries(panel)) entries.push_back(e);
  for (const auto& e : entries)
    if (names.find("\n" + e.name + "\n") == std::string::npos) names += "\n" + e.name + "\n";
  std::string text = chart.title + ". " + chart.subtitle + ". Panels:";
  for (const auto& panel : chart.panels) text += " " + panel.title + ";";
  text += " series:";
  std::istringstream lines(names);
  for (std::string line; std::getline(lines, line);)
    if (!line.empty()) text += " " + line + ",";
  return text;
}

std::string xml_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '&')
      out += "&amp;";
    else
      out += c;
  }
  return out;
}

}  // namespace

void render_chart(const Chart& chart, const std::string& path) {
  const ImageFormat format = image_format(path, "chart", false);
  const int height = measured_height(chart);
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  try {
    if (format == ImageFormat::kPng) {
      SurfacePtr surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, chart.width, height));
      check(cairo_surface_status(surface.get()), path);
      {
        CairoPtr cr(cairo_create(surface.get()));
        draw_chart(cr.get(), chart);
        check(cairo_status(cr.get()), path);
      }
      check(cairo_surface_write_to_png(surface.get(), temp.c_str()), path);
      if (std::rename(temp.c_str(), path.c_str()) != 0)
        throw Error("cannot rename '" + temp + "' to '" + path + "'");
      return;
    }
    {
      SurfacePtr surface(cairo_svg_surface_create(temp.c_str(), chart.width, height));
      check(cairo_surface_status(surface.get()), path);
      {
        CairoPtr cr(cairo_create(surface.get()));
        draw_chart(cr.get(), chart);
        check(cairo_status(cr.get()), path);
      }
      cairo_surface_finish(surface.get());
      check(cairo_surface_status(surface.get()), path);
    }
    std::ifstream in(temp, std::ios::binary);
    std::string svg((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    in.close();
    // A title and description after the root element's start tag.
    const size_t root = svg.find("<svg");
    const size_t end = root == std::string::npos ? root : svg.find('>', root);
    if (end == std::string::npos) throw Error("cannot draw '" + path + "': Cairo wrote no SVG");
    svg.insert(end + 1, "\n<title>" + xml_escape(chart.title) + "</title>\n<desc>" +
                            xml_escape(svg_description(chart)) + "</desc>");
    std::filesystem::remove(temp);
    write_file_atomically(path, [&](std::ostream& out) { out << svg; });
  } catch (...) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    throw;
  }
}

#endif

}  // namespace mx::viz
