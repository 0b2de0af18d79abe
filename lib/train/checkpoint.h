// Checkpoints in MXNet's layout — PREFIX-symbol.json and PREFIX-NNNN.params
// (arguments as "arg:NAME", auxiliary states as "aux:NAME") — plus what mx
// needs to resume exactly: PREFIX-NNNN.states (+ .states.json), the
// optimizer's state, and PREFIX-NNNN.json, the trainer's position. Every
// file is written to a temporary name and renamed into place.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "graph/symbol.h"
#include "ndarray/ndarray.h"
#include "train/loss_scaler.h"

namespace mx::train {

struct TrainerState {
  int epoch = 0;  // epochs completed
  // Batches of the next epoch already trained (a checkpoint taken on interrupt).
  int batches_done = 0;
  int64_t num_update = 0;
  uint64_t seed = 0;
  // train.loss_scale's scale and counters (a run with loss scaling only).
  std::optional<LossScaleState> loss_scale;
};

struct CheckpointPaths {
  std::string prefix;  // "runs/x/model"
  int epoch = 0;
  std::string symbol() const { return prefix + "-symbol.json"; }
  std::string params() const;
  std::string states() const { return params_base() + ".states"; }
  std::string trainer() const { return params_base() + ".json"; }
  std::string params_base() const;
};

// Writes the symbol (once), the parameters and the trainer state.
void save_checkpoint(const CheckpointPaths& paths, const graph::Symbol& symbol,
                     const std::map<std::string, NDArray>& args,
                     const std::map<std::string, NDArray>& aux, const TrainerState& state);

// Loads PREFIX-NNNN.params into `args` and `aux` (same names and shapes);
// throws InputError naming the parameters that are missing or do not fit.
void load_checkpoint_params(const std::string& params_path,
                            const std::map<std::string, NDArray>& args,
                            const std::map<std::string, NDArray>& aux);

TrainerState load_trainer_state(const std::string& path);

// Resolves --resume: a run directory (its latest checkpoint) or a
// checkpoint path ("runs/x/model-0003" or ".../model-0003.params").
CheckpointPaths find_checkpoint(const std::string& resume, const std::string& default_prefix_name);

// Epoch numbers of the checkpoints of `prefix`, ascending.
std::vector<int> list_checkpoints(const std::string& prefix);
// Deletes all but the newest `keep` checkpoints of `prefix` (keep <= 0: none deleted).
void prune_checkpoints(const std::string& prefix, int keep);

}  // namespace mx::train
