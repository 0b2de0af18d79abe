// What a training run recorded, as the charts read it: its run directory's
// metrics.jsonl (one JSON object per epoch, written by mx-train) as named
// series of values by epoch: "train.accuracy", "val.cross-entropy",
// "learning_rate", "seconds", "samples_per_sec"; and, when the run recorded
// them, the running training metrics of each log interval (intervals.jsonl).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mx::viz {

// The running training metrics of each log interval, at their places in the
// run in epochs: epoch-1 + batch/batches_per_epoch (the end of epoch 1 is 1,
// as in the per-epoch series).
struct IntervalHistory {
  int log_interval = 0;           // batches between two points
  std::vector<double> positions;  // increasing
  // "train.accuracy" -> one value per position; NaN where a point has none.
  std::map<std::string, std::vector<double>> series;

  bool empty() const { return positions.empty(); }
};

struct RunHistory {
  std::string name;  // the run directory's name
  std::string path;  // the run directory
  std::vector<double> epochs;
  // Each series has one value per epoch; NaN where that epoch has none.
  std::map<std::string, std::vector<double>> series;
  IntervalHistory intervals;  // empty when the run recorded none

  // The names of the series, sorted.
  std::vector<std::string> names() const;
  bool has(const std::string& series_name) const { return series.count(series_name) != 0; }
};

// The file a run directory keeps its history in.
std::string history_file(const std::string& run_dir);

// The file a run directory keeps its per-interval training metrics in.
std::string intervals_file(const std::string& run_dir);

// Reads `run_dir`/metrics.jsonl, and intervals.jsonl when there is one. An InputError naming the
// file (and line) when the directory or file is missing, a line is not a JSON object with an
// "epoch" number, or the last line was cut short; a run that has no epoch yet is an InputError too.
// A resumed run that wrote an epoch again keeps the last record of that epoch.
RunHistory read_run_history(const std::string& run_dir);
// The same from the text of a metrics.jsonl (`source` names it in errors).
RunHistory parse_run_history(const std::string& text, const std::string& source);
// The text of an intervals.jsonl (interval_record.h in train): an InputError
// naming `source` and the line for a line that is not a JSON object with
// "epoch" >= 1 and "batch" >= 1 (and "batches_per_epoch" >= 1 when given).
// A record without the epoch's length takes one another record gives (else
// the largest batch of that epoch). A resumed run that trained part of an
// epoch again wrote points at places already recorded: a point replaces
// every earlier one from its place on. Empty text: no points.
IntervalHistory parse_interval_history(const std::string& text, const std::string& source);

// Whether a larger value of the metric `name` ("val.accuracy") is better.
bool higher_is_better(const std::string& name);

// The best value of the series `name` and its epoch, if it has a value.
struct Best {
  double value = 0, epoch = 0;
};
std::optional<Best> best_value(const RunHistory& run, const std::string& name);

// The validation metric a run is judged by: the first of val.accuracy,
// val.top_k_accuracy, val.<any other>, or none.
std::optional<std::string> headline_metric(const RunHistory& run);

}  // namespace mx::viz
