#include "train/interval_record.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace mx::train {

std::string interval_json(const IntervalPoint& point) {
  nlohmann::json train = nlohmann::json::object();
  for (const auto& v : point.running)
    train[v.name] = std::isfinite(v.value) ? nlohmann::json(v.value) : nlohmann::json(nullptr);
  nlohmann::json line = nlohmann::json::object();
  line["epoch"] = point.epoch + 1;
  line["batch"] = point.batch;
  if (point.batches_per_epoch) line["batches_per_epoch"] = *point.batches_per_epoch;
  line["log_interval"] = point.log_interval;
  line["train"] = std::move(train);
  if (point.loss_scale) {
    line["loss_scale"] = *point.loss_scale;
    line["skipped_steps"] = point.skipped_steps;
  }
  return line.dump();
}

}  // namespace mx::train
