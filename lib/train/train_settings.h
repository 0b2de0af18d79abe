// The settings of a training run, read from its config in one function: the
// loop's numbers (epochs, batch size, seed, logging and checkpoint
// intervals), the device, the metrics, mirroring and the names of the
// network's data and label inputs. Bad values are InputErrors naming where
// they came from (file:line:column or the command line).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/context.h"
#include "graph/plan_memory.h"
#include "graph/symbol.h"
#include "kvstore/kvstore_params.h"
#include "train/config.h"
#include "train/loss_scaler.h"
#include "train/precision.h"
#include "train/stop_rules.h"

namespace mx::train {

// What the command line adds to the config.
struct TrainOptions {
  std::string config_name = "config";  // names the run directory
  std::string resume;                  // a run directory or a checkpoint
  std::string run_dir;                 // overrides train.run_dir
  bool progress_bar = false;           // live bar (terminals) instead of periodic lines
  // --dry-run, --benchmark: look at the network without joining a distributed job.
  bool inspect_only = false;
};

struct TrainSettings {
  int epochs = 1;
  int batch_size = 64;
  uint64_t seed = 0;
  int log_interval = 50;     // batches between progress lines
  int checkpoint_every = 1;  // epochs; 0: no checkpoints
  int keep_checkpoints = 3;  // the newest kept; 0: all
  std::vector<std::string> metric_names;
  std::string prefix_name = "model";  // checkpoint file names
  graph::MirrorPolicy mirror = graph::MirrorPolicy::kNone;
  Precision precision = Precision::kFloat32;  // train.precision
  Context ctx = Context::cpu();               // the first device
  // train.devices: with several, each takes batch_size / devices of a batch.
  std::vector<Context> devices = {Context::cpu()};
  // `kvstore: dist_sync`, or a mapping with type, bigarray_bound, heartbeat_*
  // and gradient_compression: {type, threshold}.
  kvstore::KVStoreParams kvstore;
  kvstore::CompressionParams compression;
  std::string data_name = "data";
  std::string label_name;  // empty until resolve_inputs finds the network's *_label
  StopSettings stop;       // train.max_time, train.early_stop
  // optimizer.clip_global_norm: the bound on the L2 norm of each step's gradient.
  std::optional<double> clip_global_norm;
  LossScaleSettings loss_scale;  // train.loss_scale
};

// Checks the config's keys and reads the settings; `cpu` is what a
// low train.precision is checked against (detected when not given).
TrainSettings parse_train_settings(const Config& config);
TrainSettings parse_train_settings(const Config& config, const CpuFeatures& cpu);

// Checks that the network has the data input and finds its label input (the
// configured one, else the argument named *_label).
void resolve_inputs(const graph::Symbol& network, TrainSettings& settings);

}  // namespace mx::train
