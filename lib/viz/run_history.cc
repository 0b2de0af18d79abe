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

// One line of a JSON-lines file as an object; `last`: it is the file's last line.
nlohmann::json parse_line(const std::string& line, const std::string& where, bool last) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(line);
  } catch (const nlohmann::json::parse_error&) {
    throw InputError(where + ": " +
                     (last ? "the last line is cut short (the run stopped while writing it?)"
                           : "not a JSON line") +
                     ": '" + line.substr(0, 60) + (line.size() > 60 ? "...'" : "'"));
  }
  return j;
}

// Calls f(object, "FILE:LINE") for each non-blank line of a .jsonl text,
// in order; a line that does not parse is an InputError at its place.
template <typename F>
void for_each_json_line(const std::string& text, const std::string& source, F&& f) {
  std::istringstream in(text);
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = source + ":" + std::to_string(line_no);
    f(parse_line(line, where, in.eof()), where);
  }
}

// A positive whole number at `key`, if there is one.
std::optional<int64_t> count_at(const nlohmann::json& j, const char* key, const std::string& where,
                                bool required) {
  if (!j.contains(key)) {
    if (required)
      throw InputError(where + ": \"" + key +
                       "\" is missing (expected a JSON object with \"epoch\" and \"batch\")");
    return std::nullopt;
  }
  const auto& v = j[key];
  if (!v.is_number_integer() || v.get<int64_t>() < 1)
    throw InputError(where + ": bad \"" + key + "\" " + v.dump() +
                     " (expected a whole number >= 1)");
  return v.get<int64_t>();
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
  for_each_json_line(text, source, [&](const nlohmann::json& j, const std::string& where) {
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
  });
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

std::string intervals_file(const std::string& run_dir) {
  return (fs::path(run_dir) / "intervals.jsonl").string();
}

IntervalHistory parse_interval_history(const std::string& text, const std::string& source) {
  struct Record {
    int64_t epoch, batch;
    std::optional<int64_t> batches_per_epoch;
    int log_interval = 0;
    std::map<std::string, double> values;
  };
  std::vector<Record> records;
  for_each_json_line(text, source, [&](const nlohmann::json& j, const std::string& where) {
    if (!j.is_object()) throw InputError(where + ": expected a JSON object");
    Record r;
    r.epoch = *count_at(j, "epoch", where, true);
    r.batch = *count_at(j, "batch", where, true);
    r.batches_per_epoch = count_at(j, "batches_per_epoch", where, false);
    r.log_interval = static_cast<int>(count_at(j, "log_interval", where, false).value_or(0));
    if (j.contains("train")) {
      if (!j["train"].is_object()) throw InputError(where + ": \"train\" is not an object");
      for (const auto& [metric, v] : j["train"].items()) {
        if (!v.is_number() && !v.is_null())
          throw InputError(where + ": \"train\"." + metric + " is not a number");
        r.values["train." + metric] = number_or_nan(v);
      }
    }
    records.push_back(std::move(r));
  });
  // An epoch of unknown length (the first of an iterator that cannot count
  // its batches) takes the length another record knows, else its largest batch.
  std::optional<int64_t> known;
  std::map<int64_t, int64_t> largest_batch;
  for (const auto& r : records) {
    if (r.batches_per_epoch) known = r.batches_per_epoch;
    largest_batch[r.epoch] = std::max(largest_batch[r.epoch], r.batch);
  }
  struct Placed {
    double position;
    const Record* record;
  };
  std::vector<Placed> kept;
  for (const auto& r : records) {
    const int64_t length = r.batches_per_epoch ? *r.batches_per_epoch
                           : known             ? *known
                                               : largest_batch[r.epoch];
    // Within its epoch even where a borrowed length is shorter than this epoch.
    const double position =
        static_cast<double>(r.epoch - 1) +
        std::min(1.0, static_cast<double>(r.batch) / static_cast<double>(length));
    // A resumed run trained from here again: its points replace the earlier ones.
    while (!kept.empty() && kept.back().position >= position) kept.pop_back();
    kept.push_back({position, &r});
  }
  IntervalHistory out;
  for (const auto& k : kept)
    for (const auto& [name, v] : k.record->values) out.series[name];
  for (auto& [name, column] : out.series) column.assign(kept.size(), kNaN);
  for (size_t i = 0; i < kept.size(); ++i) {
    out.positions.push_back(kept[i].position);
    for (const auto& [name, v] : kept[i].record->values) out.series[name][i] = v;
    if (kept[i].record->log_interval > 0) out.log_interval = kept[i].record->log_interval;
  }
  return out;
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
  const std::string intervals = intervals_file(run_dir);
  std::ifstream interval_in(intervals, std::ios::binary);
  if (interval_in) {
    std::ostringstream interval_text;
    interval_text << interval_in.rdbuf();
    run.intervals = parse_interval_history(interval_text.str(), intervals);
  }
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
