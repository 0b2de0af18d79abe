#include "train/run_summary.h"

#include <cmath>
#include <filesystem>

#include "base/strings.h"
#include "train/checkpoint.h"
#include "train/progress.h"

namespace mx::train {
namespace fs = std::filesystem;

void RunSummary::record(int epoch, const std::vector<metric::MetricValue>& train_values,
                        const std::vector<metric::MetricValue>& val_values) {
  epochs_.push_back({epoch, train_values, val_values});
}

std::optional<std::pair<size_t, std::string>> RunSummary::best() const {
  if (epochs_.empty()) return std::nullopt;
  // Which figure, and which way is better.
  std::string split, name;
  bool maximize = true;
  if (watch_) {
    split = watch_->split;
    name = watch_->metric;
    maximize = watch_->maximize;
  } else {
    for (const std::string s : {"val", "train"}) {
      const auto& values = s == "val" ? epochs_.back().val : epochs_.back().train;
      for (const auto& v : values)
        if (auto up = metric_maximizes(v.name); up && name.empty()) {
          split = s;
          name = v.name;
          maximize = *up;
        }
      if (!name.empty()) break;
    }
  }
  if (name.empty()) return std::nullopt;
  std::optional<size_t> best;
  double best_value = 0;
  for (size_t i = 0; i < epochs_.size(); ++i)
    for (const auto& v : split == "val" ? epochs_[i].val : epochs_[i].train)
      if (v.name == name && std::isfinite(v.value) &&
          (!best || (maximize ? v.value > best_value : v.value < best_value))) {
        best = i;
        best_value = v.value;
      }
  if (!best) return std::nullopt;
  return std::make_pair(*best, split + "-" + name);
}

std::vector<std::string> RunSummary::lines(const std::string& run_dir, const std::string& prefix,
                                           int last_checkpoint, const std::string& inputs) const {
  std::vector<std::string> out;
  std::optional<int> best_epoch;
  if (const auto b = best()) {
    const Epoch& e = epochs_[b->first];
    best_epoch = e.epoch;
    out.push_back(str("best epoch ", e.epoch, " (by ", b->second,
                      "):", metrics_text(e.train, "train-"), metrics_text(e.val, "val-")));
  }
  // The best epoch's checkpoint, when one was written and not pruned.
  std::optional<CheckpointPaths> use;
  if (best_epoch && fs::exists(CheckpointPaths{prefix, *best_epoch}.params()))
    use = CheckpointPaths{prefix, *best_epoch};
  else if (last_checkpoint >= 0)
    use = CheckpointPaths{prefix, last_checkpoint};
  if (last_checkpoint >= 0)
    out.push_back(str(
        "checkpoints: ", CheckpointPaths{prefix, last_checkpoint}.params(), " (last)",
        use && use->epoch != last_checkpoint ? ", " + use->params() + " (best)" : std::string()));
  else
    out.push_back("checkpoints: none written (train.checkpoint_every: 0)");
  out.push_back(str("curves: ", (fs::path(run_dir) / "curves.png").string(),
                    ", metrics: ", (fs::path(run_dir) / "metrics.jsonl").string()));
  if (use) out.push_back(str("predict with: mx-predict --model ", use->params_base(), " ", inputs));
  return out;
}

std::string predict_inputs_for(const Config& config) {
  for (const std::string section : {"data.val", "data.train"}) {
    if (!config.has(section + ".type")) continue;
    const std::string type = to_lower(config.get_string(section + ".type", ""));
    // Relative paths are read from where mx-train runs, as the run did.
    if ((type == "mnist" || type == "mnistiter") && config.has(section + ".image") &&
        config.has(section + ".label"))
      return config.get_string(section + ".image", "") + " --labels " +
             config.get_string(section + ".label", "");
    if ((type == "record" || type == "imagerecorditer") && config.has(section + ".path_imgrec"))
      return config.get_string(section + ".path_imgrec", "");
    // A language model: sampling text (train/text_generator.h).
    if (type == "text" || type == "textiter") return "--generate 200 --prompt 'The '";
  }
  return "IMAGE...";
}

}  // namespace mx::train
