// A run directory: where a training run writes its resolved config
// (config.yaml), its log (train.log), one JSON line of metrics per epoch
// (metrics.jsonl), the running training metrics of each log interval
// (intervals.jsonl, interval_record.h) and its checkpoints. A new run gets a fresh directory
// (--run-dir, train.run_dir, else runs/CONFIG-YYYYMMDD-HHMMSS); a resumed
// run continues in its checkpoint's directory and appends to its files.
#pragma once

#include <fstream>
#include <optional>
#include <string>

#include "train/checkpoint.h"
#include "train/config.h"
#include "train/train_settings.h"

namespace mx::train {

class RunDir {
 public:
  // Resolves --resume (an InputError if it names no checkpoint), creates the
  // directory, saves a new run's config and opens the log. With `writes`
  // false (the workers of a distributed run other than worker 0) it only
  // resolves the paths: say, append_metrics and writes() do nothing.
  static RunDir open(const Config& config, const TrainOptions& options,
                     const std::string& prefix_name, bool writes = true);

  const std::string& path() const { return path_; }
  // The checkpoint --resume named, if any.
  const std::optional<CheckpointPaths>& resume_from() const { return resume_from_; }
  CheckpointPaths checkpoint(int epoch) const { return {prefix_, epoch}; }
  const std::string& prefix() const { return prefix_; }
  // Whether this process writes the run (prints, logs, checkpoints).
  bool writes() const { return writes_; }

  // A line on stdout and in train.log.
  void say(const std::string& line);
  // One line of metrics.jsonl.
  void append_metrics(const std::string& json_line) const;
  // One line of intervals.jsonl.
  void append_interval(const std::string& json_line) const;

 private:
  std::string path_, prefix_;
  std::optional<CheckpointPaths> resume_from_;
  std::ofstream log_;
  bool writes_ = true;
};

}  // namespace mx::train
