// Inference with a checkpoint — mx's (a run directory) or one exported by
// MXNet 1.x (PREFIX-symbol.json + PREFIX-NNNN.params): the network is bound
// for inference only, so its memory plan has no backward part.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "graph/symbol.h"
#include "train/checkpoint.h"

namespace mx::train {

class Predictor {
 public:
  // `model`: a run directory (its latest checkpoint), "PREFIX-NNNN[.params]",
  // or a PREFIX with `epoch`.
  Predictor(const std::string& model, std::optional<int> epoch, Context ctx);

  // Class probabilities (or whatever the first output is), one row per
  // example of `batch` (shape (N, ...) matching the network's input).
  NDArray predict(const NDArray& batch);

  const graph::Symbol& symbol() const { return symbol_; }
  std::string params_path() const { return paths_.params(); }
  // The run's config.yaml next to the checkpoint, when there is one.
  std::optional<std::string> run_config() const;
  const std::string& data_name() const { return data_name_; }

 private:
  void bind(const Shape& data_shape);

  CheckpointPaths paths_;
  std::string run_dir_;
  graph::Symbol symbol_;
  std::string data_name_ = "data";
  Context ctx_;
  std::map<std::string, NDArray> params_;  // arg: and aux: arrays from the file
  std::unique_ptr<Executor> exe_;
};

}  // namespace mx::train
