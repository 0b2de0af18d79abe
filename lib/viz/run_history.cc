#include "viz/run_history.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/error.h"
#include "base/strings.h"

namespace mx::viz {
namespace fs = std::filesystem;

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double number_or_nan(const nlohmann::json& v) {
  return v.is_number() ? v.get<double>() : kNaN;  // null: a non-finite value
}

}  // namespace

std::vector<std::string> RunHistory::names() const {
  std::vector<std::string> out;
  for (const auto& [k, v] : series) out.push_back(k);
  return out;
}

std::string history_file(const std::string& run_dir) {
  return (fs::path(run_dir) / "metrics.jsonl").string();
}

RunHistory parse_run_history(const std::string& text, const std::string& source) {
  // epoch -> name -> value; the last record of an epoch wins.
  std::map<double, std::map<std::string, double>> records;
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = source + ":" + std::to_string(line_no);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      const bool last = in.eof();
      throw InputError(where + ": " +
                       (last ? "the last line is cut short (the run stopped while writing it?)"
                             : "not a JSON line") +
                       ": '" + line.substr(0, 60) + (line.size() > 60 ? "...'" : "'"));
    }
    if (!j.is_object() || !j.contains("epoch") || !j["epoch"].is_number())
      throw InputError(where + ": expected a JSON object with an \"epoch\" number");
    const double epoch = j["epoch"].get<double>();
    if (!std::isfinite(epoch) || epoch < 0)
      throw InputError(where + ": bad epoch " + j["epoch"].dump());
    std::map<std::string, double> values;
    for (const auto& [key, value] : j.items()) {
      if (key == "epoch") continue;
      if (value.is_object()) {
        for (const auto& [metric, v] : value.items()) {
          if (!v.is_number() && !v.is_null())
            throw InputError(where + ": \"" + key + "\"." + metric + " is not a number");
          values[key + "." + metric] = number_or_nan(v);
        }
      } else if (value.is_number() || value.is_null()) {
        values[key] = number_or_nan(value);
      }
    }
    records[epoch] = std::move(values);
  }
  if (records.empty()) throw InputError(source + ": no epoch recorded yet");
  RunHistory run;
  for (const auto& [epoch, values] : records)
    for (const auto& [name, v] : values) run.series[name];
  for (auto& [name, column] : run.series) column.assign(records.size(), kNaN);
  size_t i = 0;
  for (const auto& [epoch, values] : records) {
    run.epochs.push_back(epoch);
    for (const auto& [name, v] : values) run.series[name][i] = v;
    ++i;
  }
  return run;
}

RunHistory read_run_history(const std::string& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec))
    throw InputError("run directory '" + run_dir + "' does not exist");
  const std::string file = history_file(run_dir);
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw InputError("'" + file +
                     "' is missing: not a run directory of mx-train, or no epoch has ended yet");
  std::ostringstream text;
  text << in.rdbuf();
  RunHistory run = parse_run_history(text.str(), file);
  run.path = run_dir;
  fs::path p = fs::path(run_dir).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  run.name = p.filename().string();
  if (run.name.empty() || run.name == ".") run.name = fs::absolute(p).filename().string();
  return run;
}

bool higher_is_better(const std::string& name) {
  const std::string metric = to_lower(name.substr(name.find('.') + 1));
  return metric.find("acc") != std::string::npos || metric == "f1" || metric == "mcc" ||
         metric == "samples_per_sec";
}

std::optional<Best> best_value(const RunHistory& run, const std::string& name) {
  auto it = run.series.find(name);
  if (it == run.series.end()) return std::nullopt;
  std::optional<Best> best;
  const bool higher = higher_is_better(name);
  for (size_t i = 0; i < it->second.size(); ++i) {
    const double v = it->second[i];
    if (!std::isfinite(v)) continue;
    if (!best || (higher ? v > best->value : v < best->value)) best = Best{v, run.epochs[i]};
  }
  return best;
}

std::optional<std::string> headline_metric(const RunHistory& run) {
  for (const char* name : {"val.accuracy", "val.top_k_accuracy"})
    if (run.has(name)) return name;
  for (const auto& [name, v] : run.series)
    if (name.rfind("val.", 0) == 0) return name;
  return std::nullopt;
}

}  // namespace mx::viz
