// The run's record of its training between epochs: intervals.jsonl in the
// run directory, one JSON line per log interval with the running training
// metrics and where in the run they were taken, e.g.
//   {"batch":20,"batches_per_epoch":100,"epoch":1,"log_interval":20,"train":{"accuracy":0.61}}
// ("batches_per_epoch" is left out while the epoch's length is unknown;
// "loss_scale" and "skipped_steps" are there with train.loss_scale). The
// curves draw it behind the per-epoch points (viz/run_history.h reads it).
#pragma once

#include <string>

#include "train/progress.h"

namespace mx::train {

// The file name in the run directory.
inline constexpr const char* kIntervalsFile = "intervals.jsonl";

// The JSON line of one interval, without its newline ("epoch" 1-based).
std::string interval_json(const IntervalPoint& point);

}  // namespace mx::train
