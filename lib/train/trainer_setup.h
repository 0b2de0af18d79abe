// What a trainer is made of, each built from its part of the config: the
// network (`network` in YAML or an MXNet `symbol` file), the data iterators
// (data.train, data.val), the executor bound for training, the initial
// parameters (initializer, train.pretrained) and the optimizer
// (optimizer, lr_scheduler, the layers' lr_mult/wd_mult).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "io/data_iter.h"
#include "optim/optimizer.h"
#include "train/config.h"
#include "train/network_yaml.h"
#include "train/train_settings.h"

namespace mx::train {

// `origins` (when given) receives where a YAML network's nodes came from.
graph::Symbol load_network(const Config& config, LayerOrigins* origins = nullptr);

// The shape of data.train's batches when the config alone says it, before
// any data is read: the text iterator's (batch_size, seq_len). nullopt for
// other iterators.
std::optional<Shape> configured_data_shape(const Config& config, const TrainSettings& settings);

// Infers the network's shapes from a batch's `data_shape`: a network that
// does not take such data is an InputError naming the YAML layer that
// refused it (from `origins`), the data's shape and the operator's reason.
void check_network_takes(const graph::Symbol& network, const TrainSettings& settings,
                         const Shape& data_shape, const LayerOrigins& origins);

// Which shard of the data this process reads (a distributed worker's index
// among num_workers).
struct DataShard {
  int part_index = 0, num_parts = 1;
};

// data.train, shuffled; data.val (none when the config has no data.val).
std::unique_ptr<DataIter> make_train_data(const Config& config, const TrainSettings& settings,
                                          DataShard shard = {});
std::unique_ptr<DataIter> make_val_data(const Config& config, const TrainSettings& settings,
                                        DataShard shard = {});

// Binds `network` for training on batches of `data`. Iterators give (batch, 1)
// labels where a loss layer wants (batch,): the label is bound as the network
// wants it.
// `device`/`batch`: one device's executor and share of the batch (0: the
// data's batch).
std::unique_ptr<Executor> bind_for_training(const graph::Symbol& network,
                                            const TrainSettings& settings, const DataIter& data,
                                            Context device, int64_t batch = 0);

// The network's parameters: its arguments other than the data, the label and
// carried recurrent states (carried_states.h),
// in argument order (the optimizer's indices).
std::vector<std::string> parameter_names(const graph::Symbol& network,
                                         const TrainSettings& settings);

// Fills the parameters and auxiliary states with the initializer, then with
// train.pretrained's weights where given.
void initialize_parameters(const Config& config, const TrainSettings& settings,
                           const graph::Symbol& network, const Executor& exe,
                           const std::vector<std::string>& param_names);

// The optimizer and learning-rate schedule of the config's `optimizer` and
// `lr_scheduler` sections; a bad value is an InputError at the place that set
// it (file line or command-line override).
std::unique_ptr<optim::Optimizer> make_configured_optimizer(const Config& config, int batch_size);

// The optimizer (by default rescaling gradients by 1/batch_size, as MXNet's
// Module does; a dist_sync run passes the global batch) with its
// learning-rate schedule, parameter names and multipliers.
std::unique_ptr<optim::Optimizer> make_optimizer(const Config& config, const graph::Symbol& network,
                                                 const std::vector<std::string>& param_names,
                                                 int batch_size);
// make_optimizer's optimizer in an Updater that keeps its state per
// parameter index.
std::unique_ptr<optim::Updater> make_updater(const Config& config, const graph::Symbol& network,
                                             const std::vector<std::string>& param_names,
                                             int batch_size);

}  // namespace mx::train
