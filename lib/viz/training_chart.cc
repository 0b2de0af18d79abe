#include "viz/training_chart.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>

#include "base/error.h"
#include "base/strings.h"

namespace mx::viz {

namespace {

// "val.accuracy" -> "accuracy"; "learning_rate" stays.
std::string metric_of(const std::string& name) {
  const size_t dot = name.find('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

std::string prefix_of(const std::string& name) {
  const size_t dot = name.find('.');
  return dot == std::string::npos ? "" : name.substr(0, dot);
}

// `xs`: the x of each epoch's point (default: the epoch).
Series make_series(const RunHistory& run, const std::string& name, const std::string& label,
                   int color, LineStyle style, const std::vector<double>* xs = nullptr) {
  Series s;
  s.name = label;
  s.color = color;
  s.style = style;
  const double scale = series_look(name).scale;
  const auto& values = run.series.at(name);
  for (size_t i = 0; i < values.size(); ++i)
    s.points.push_back({xs != nullptr ? (*xs)[i] : run.epochs[i], values[i] * scale});
  s.markers = values.size() <= 60;
  return s;
}

// The running training metric of each log interval, if the run recorded it:
// a thin light line of the train colour.
std::optional<Series> interval_series(const RunHistory& run, const std::string& name) {
  const auto it = run.intervals.series.find(name);
  if (it == run.intervals.series.end()) return std::nullopt;
  Series s;
  const int every = run.intervals.log_interval;
  s.name = every > 0 ? str("train (every ", every, every == 1 ? " batch)" : " batches)")
                     : "train (between epochs)";
  s.color = 0;
  s.markers = false;
  s.width = 1.2;
  s.opacity = 0.45;
  const double scale = series_look(name).scale;
  const auto& positions = run.intervals.positions;
  for (size_t i = 0; i < it->second.size(); ++i) {
    // Each epoch's running metric starts afresh: a gap between epochs.
    if (i > 0 && std::ceil(positions[i]) != std::ceil(positions[i - 1]))
      s.points.push_back({NAN, NAN});
    s.points.push_back({positions[i], it->second[i] * scale});
  }
  return s;
}

// A learning rate that falls by more than a factor of 20 is shown on a log axis.
bool spans_decades(const Panel& panel) {
  double lo = INFINITY, hi = 0;
  for (const auto& s : panel.series)
    for (const auto& p : s.points) {
      if (!std::isfinite(p.y)) continue;
      if (p.y <= 0) return false;
      lo = std::min(lo, p.y);
      hi = std::max(hi, p.y);
    }
  return hi > 0 && hi / lo >= 20;
}

// Loss-like metrics first, then the others, by name.
std::vector<std::string> metrics_in(const RunHistory& run) {
  std::set<std::string> metrics;
  for (const auto& [name, v] : run.series)
    if (prefix_of(name) == "train" || prefix_of(name) == "val") metrics.insert(metric_of(name));
  std::vector<std::string> ordered(metrics.begin(), metrics.end());
  std::stable_partition(ordered.begin(), ordered.end(),
                        [](const std::string& m) { return !higher_is_better(m); });
  return ordered;
}

std::string figure(const std::string& name, double value) {
  const SeriesLook look = series_look(name);
  char buf[64];
  if (look.scale == 100)
    std::snprintf(buf, sizeof buf, "%.2f%%", value * 100);
  else
    std::snprintf(buf, sizeof buf, "%.4g", value);
  return buf;
}

std::string epoch_text(double epoch) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", epoch);
  return buf;
}

}  // namespace

SeriesLook series_look(const std::string& name) {
  const std::string m = to_lower(metric_of(name));
  if (m == "accuracy" || m == "top_k_accuracy")
    return {m == "accuracy" ? "accuracy" : "top-k accuracy", "accuracy (%)", 100};
  if (m == "cross-entropy") return {"loss (cross-entropy)", "cross-entropy (nats)", 1};
  if (m == "mse") return {"mean squared error", "MSE (label units²)", 1};
  if (m == "mae") return {"mean absolute error", "MAE (label units)", 1};
  if (m == "rmse") return {"root mean squared error", "RMSE (label units)", 1};
  if (m == "learning_rate") return {"learning rate", "learning rate (per update)", 1};
  if (m == "seconds") return {"epoch time", "time (s)", 1};
  if (m == "samples_per_sec") return {"throughput", "samples/s", 1};
  return {m, m, 1};
}

Chart run_curves_chart(const RunHistory& run) {
  Chart chart;
  chart.title = "Training run " + run.name;
  for (const std::string& metric : metrics_in(run)) {
    Panel panel;
    const SeriesLook look = series_look(metric);
    panel.title = look.title;
    panel.y_label = look.axis_label;
    // The points between epochs first: a light line behind the epochs' points.
    if (auto interval = interval_series(run, "train." + metric))
      panel.series.push_back(std::move(*interval));
    if (run.has("train." + metric))
      panel.series.push_back(make_series(run, "train." + metric, "train", 0, LineStyle::kSolid));
    if (run.has("val." + metric))
      panel.series.push_back(
          make_series(run, "val." + metric, "validation", 1, LineStyle::kDashed));
    chart.panels.push_back(std::move(panel));
  }
  if (run.has("learning_rate")) {
    Panel panel;
    panel.title = "learning rate";
    panel.y_label = series_look("learning_rate").axis_label;
    panel.series.push_back(
        make_series(run, "learning_rate", "learning rate", 2, LineStyle::kSolid));
    panel.log_y = spans_decades(panel);
    chart.panels.push_back(std::move(panel));
  }
  if (run.has("samples_per_sec") && chart.panels.size() % 2 == 1) {
    // The empty place of the grid shows the speed.
    Panel panel;
    panel.title = "throughput";
    panel.y_label = series_look("samples_per_sec").axis_label;
    panel.series.push_back(make_series(run, "samples_per_sec", "training", 4, LineStyle::kSolid));
    chart.panels.push_back(std::move(panel));
  }
  chart.columns = chart.panels.size() == 1 ? 1 : 2;
  const std::string epochs = str(run.epochs.size(), run.epochs.size() == 1 ? " epoch" : " epochs");
  const auto headline = headline_metric(run);
  const auto best = headline ? best_value(run, *headline) : std::nullopt;
  if (best)
    chart.subtitle = "best validation " + series_look(*headline).title + " " +
                     figure(*headline, best->value) + " at epoch " + epoch_text(best->epoch) +
                     "   (" + epochs + ")";
  else
    chart.subtitle = epochs + ", no validation data";
  return chart;
}

// The training time at the end of each epoch of `run`, in seconds.
std::vector<double> training_time(const RunHistory& run) {
  const auto seconds = run.series.find("seconds");
  if (seconds == run.series.end())
    throw InputError(run.path + ": metrics.jsonl has no epoch 'seconds' to draw against time");
  std::vector<double> ends;
  double total = 0;
  for (size_t i = 0; i < seconds->second.size(); ++i) {
    if (!std::isfinite(seconds->second[i]))
      throw InputError(str(run.path, ": epoch ", run.epochs[i],
                           " of metrics.jsonl has no 'seconds' to draw against time"));
    total += seconds->second[i];
    ends.push_back(total);
  }
  return ends;
}

Chart compare_chart(const std::vector<RunHistory>& runs, const std::vector<std::string>& names,
                    XAxis x) {
  if (runs.empty()) throw InputError("give at least one run directory");
  std::vector<std::vector<double>> times;
  if (x == XAxis::kTime)
    for (const auto& run : runs) times.push_back(training_time(run));
  std::vector<std::string> shown = names;
  if (shown.empty()) {
    std::set<std::string> val, train;
    for (const auto& run : runs)
      for (const auto& [name, v] : run.series) {
        if (prefix_of(name) == "val") val.insert(name);
        if (prefix_of(name) == "train") train.insert(name);
      }
    shown.assign(val.empty() ? train.begin() : val.begin(), val.empty() ? train.end() : val.end());
    std::stable_partition(shown.begin(), shown.end(),
                          [](const std::string& m) { return !higher_is_better(m); });
    shown.push_back("learning_rate");
  }
  Chart chart;
  std::vector<std::string> run_names;
  for (const auto& run : runs) run_names.push_back(run.name);
  chart.title = "Training runs compared";
  chart.subtitle = join(run_names, "  vs  ");
  for (const auto& name : shown) {
    const bool anywhere =
        std::any_of(runs.begin(), runs.end(), [&](const RunHistory& r) { return r.has(name); });
    if (!anywhere) {
      if (names.empty()) continue;  // the default learning-rate panel of an old run
      std::set<std::string> available;
      for (const auto& run : runs)
        for (const auto& [n, v] : run.series) available.insert(n);
      throw InputError("no run has the series '" + name + "'; the runs have: " +
                       join(std::vector<std::string>(available.begin(), available.end()), ", "));
    }
    Panel panel;
    const SeriesLook look = series_look(name);
    const std::string prefix = prefix_of(name);
    panel.title = (prefix == "val"     ? "validation "
                   : prefix == "train" ? "training "
                                       : "") +
                  look.title;
    panel.y_label = look.axis_label;
    if (x == XAxis::kTime) {
      panel.x_label = "training time (s)";
      panel.integer_x = false;
    }
    for (size_t i = 0; i < runs.size(); ++i)
      if (runs[i].has(name))
        panel.series.push_back(make_series(runs[i], name, runs[i].name, static_cast<int>(i),
                                           LineStyle::kSolid,
                                           x == XAxis::kTime ? &times[i] : nullptr));
    panel.log_y = name == "learning_rate" && spans_decades(panel);
    chart.panels.push_back(std::move(panel));
  }
  // A best-figure line per run, for the headline metric.
  std::vector<std::string> bests;
  for (const auto& run : runs) {
    const auto headline = headline_metric(run);
    const auto best = headline ? best_value(run, *headline) : std::nullopt;
    if (best)
      bests.push_back(run.name + ": best validation " + series_look(*headline).title + " " +
                      figure(*headline, best->value) + " (epoch " + epoch_text(best->epoch) + ")");
  }
  // Each run's best on a line of its own once they would not fit on one.
  const std::string one_line = join(bests, "    ");
  if (!bests.empty()) chart.subtitle = one_line.size() <= 110 ? one_line : join(bests, "\n");
  // One legend for all panels: the runs are the same in each.
  for (size_t i = 0; i < runs.size(); ++i)
    chart.legend.push_back({runs[i].name, static_cast<int>(i), LineStyle::kSolid});
  for (auto& panel : chart.panels) panel.show_legend = false;
  chart.columns = chart.panels.size() == 1 ? 1 : 2;
  return chart;
}

}  // namespace mx::viz
