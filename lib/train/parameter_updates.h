// Where the optimizer changes the parameters, behind one interface so that
// the training loop does not ask: in this process, from the one device's
// gradients (one process, one device: no store), or where the job's KVStore
// keeps the values (several devices, or the servers of a distributed job),
// after the devices' and workers' gradients are summed.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "graph/symbol.h"
#include "kvstore/coordinator.h"
#include "train/config.h"
#include "train/train_settings.h"

namespace mx::train {

class ParameterUpdates {
 public:
  virtual ~ParameterUpdates() = default;
  // Starts from the first executor's parameters (every executor gets them);
  // a resumed run passes its checkpoint's optimizer states and step count.
  // Collective over the workers of a distributed job.
  virtual void start(const std::optional<std::string>& states, int64_t num_update) = 0;
  // One optimizer step of every parameter from the executors' gradients. The
  // updates are engine operations that overlap the rest of the backward pass
  // (unless kvstore.overlap is off).
  virtual void step() = 0;
  // The optimizer's states at a step boundary (a store's: where it runs).
  virtual void save_states(const std::string& path) = 0;
  // Steps taken, and the learning rate the schedule gives now.
  virtual int64_t num_update() const = 0;
  virtual double learning_rate() = 0;
  // Makes the next step() divide the gradients by `divisor` inside the
  // optimizer (its rescale_grad) and returns true; false where the
  // optimizer runs in a store, whose gradients the caller divides itself.
  virtual bool divide_gradients_by(double /*divisor*/) { return false; }
};

// The updates of `executors` (one per device; the first is the reference) in
// `job`: through its store when it has one.
std::unique_ptr<ParameterUpdates> make_parameter_updates(
    const Config& config, const graph::Symbol& network, const std::vector<std::string>& param_names,
    const TrainSettings& settings, std::vector<Executor*> executors, kvstore::Coordinator& job);

}  // namespace mx::train
