#include "train/stop_rules.h"

#include <cmath>
#include <cstdlib>

#include "base/error.h"
#include "base/strings.h"

namespace mx::train {

double parse_duration(const std::string& text) {
  const std::string bad =
      "'" + text + "' is not a time: write e.g. 90s, 30m, 2h or 1h30m (or seconds as a number)";
  const std::string t = trim(text);
  if (t.empty()) throw InputError(bad);
  double total = 0;
  size_t i = 0;
  bool with_unit = false;
  while (i < t.size()) {
    const char* begin = t.c_str() + i;
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    if (end == begin || !std::isfinite(value) || value < 0 || *begin == '+' || *begin == '-')
      throw InputError(bad);
    i += static_cast<size_t>(end - begin);
    double unit = 1;
    if (i < t.size()) {
      switch (t[i]) {
        case 's': unit = 1; break;
        case 'm': unit = 60; break;
        case 'h': unit = 3600; break;
        case 'd': unit = 86400; break;
        default: throw InputError(bad);
      }
      ++i;
      with_unit = true;
    } else if (with_unit) {
      throw InputError(bad);  // "1h30": the unit of the last part is missing
    }
    total += value * unit;
  }
  if (!(total > 0) || !std::isfinite(total)) throw InputError(bad + "; it must be more than 0");
  return total;
}

std::optional<bool> metric_maximizes(const std::string& name) {
  const std::string n = to_lower(name);
  if (n.find("acc") != std::string::npos) return true;
  if (n == "ce" || n == "cross-entropy" || n == "crossentropy" || n == "loss" || n == "mse" ||
      n == "mae" || n == "rmse" || n.find("loss") != std::string::npos)
    return false;
  return std::nullopt;
}

std::vector<std::string> stop_setting_keys() {
  return {"train.max_time", "train.early_stop.metric", "train.early_stop.patience",
          "train.early_stop.min_delta", "train.early_stop.mode"};
}

namespace {

// "val.accuracy", "val-acc", "train.ce" or "accuracy" -> split and the
// metric's own name, checked against the run's metrics.
void resolve_metric(const Config& c, const std::vector<std::string>& metric_names,
                    EarlyStopSettings& e) {
  const std::string key = "train.early_stop.metric";
  const std::string where = c.origin(key);
  std::string name = c.get_string(key, "");
  const bool has_val = c.has("data.val.type");
  e.split = has_val ? "val" : "train";
  for (const std::string split : {"val", "train"})
    for (const char sep : {'.', '-', '_'})
      if (name.rfind(split + sep, 0) == 0) {
        e.split = split;
        name = name.substr(split.size() + 1);
      }
  if (e.split == "val" && !has_val)
    throw InputError(where + ": train.early_stop watches '" + c.get_string(key, "") +
                     "' but the config has no validation data (data.val)");
  std::vector<std::string> known;
  for (const auto& m : metric_names) {
    std::string own;
    try {
      own = metric::make_metric(m)->name();
    } catch (const InputError& error) {
      throw InputError(c.origin("train.metrics") + ": " + error.what());
    }
    known.push_back(own);
    if (to_lower(name) == to_lower(m) || to_lower(name) == own) e.metric = own;
  }
  if (e.metric.empty())
    throw InputError(
        where + ": train.early_stop.metric '" + c.get_string(key, "") +
        "' is not one of the run's metrics (train.metrics: " + join(metric_names, ", ") + ")" +
        did_you_mean(name, known) + "; write e.g. val.accuracy or val.cross-entropy");
}

}  // namespace

StopSettings parse_stop_settings(const Config& c, const std::vector<std::string>& metric_names) {
  StopSettings s;
  if (c.has("train.max_time")) {
    try {
      s.max_seconds = parse_duration(c.get_string("train.max_time", ""));
    } catch (const InputError& e) {
      throw InputError(c.origin("train.max_time") + ": train.max_time " + e.what());
    }
  }
  const auto section = c.section("train.early_stop");
  if (section.empty()) return s;
  if (!c.has("train.early_stop.metric"))
    throw InputError(c.origin(c.has("train.early_stop.patience")    ? "train.early_stop.patience"
                              : c.has("train.early_stop.min_delta") ? "train.early_stop.min_delta"
                                                                    : "train.early_stop.mode") +
                     ": train.early_stop needs a metric (e.g. metric: val.accuracy)");
  EarlyStopSettings e;
  resolve_metric(c, metric_names, e);
  const int64_t patience = c.get_int("train.early_stop.patience", 3);
  if (patience < 1)
    throw InputError(c.origin("train.early_stop.patience") +
                     ": train.early_stop.patience must be at least 1 (epochs)");
  e.patience = static_cast<int>(patience);
  e.min_delta = c.get_double("train.early_stop.min_delta", 0);
  if (!(e.min_delta >= 0) || !std::isfinite(e.min_delta))
    throw InputError(c.origin("train.early_stop.min_delta") +
                     ": train.early_stop.min_delta must be 0 or more");
  if (c.has("train.early_stop.mode")) {
    const std::string mode = c.get_string("train.early_stop.mode", "");
    if (mode != "min" && mode != "max")
      throw InputError(c.origin("train.early_stop.mode") +
                       ": train.early_stop.mode must be min or max, not '" + mode + "'");
    e.maximize = mode == "max";
  } else {
    const auto maximize = metric_maximizes(e.metric);
    if (!maximize)
      throw InputError(c.origin("train.early_stop.metric") + ": cannot tell whether '" + e.metric +
                       "' should go up or down; give train.early_stop.mode: min or max");
    e.maximize = *maximize;
  }
  s.early_stop = e;
  return s;
}

std::optional<std::string> EarlyStop::after_epoch(
    int epoch, const std::vector<metric::MetricValue>& train_values,
    const std::vector<metric::MetricValue>& val_values) {
  const auto& values = s_.split == "val" ? val_values : train_values;
  std::optional<double> value;
  for (const auto& v : values)
    if (v.name == s_.metric) value = v.value;
  // A NaN or a missing figure is no improvement.
  const bool improved = value && std::isfinite(*value) &&
                        (best_epoch_ == 0 || (s_.maximize ? *value > best_ + s_.min_delta
                                                          : *value < best_ - s_.min_delta));
  if (improved) {
    best_ = *value;
    best_epoch_ = epoch;
    stale_ = 0;
    return std::nullopt;
  }
  if (++stale_ < s_.patience) return std::nullopt;
  return str("early stop: ", s_.label(), " has not improved by more than ", s_.min_delta, " for ",
             stale_, stale_ == 1 ? " epoch" : " epochs",
             best_epoch_ > 0 ? str(" (best ", best_, " at epoch ", best_epoch_, ")")
                             : std::string(" (no finite value yet)"));
}

}  // namespace mx::train
