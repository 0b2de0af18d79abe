// Auxiliary states (BatchNorm's moving mean and variance) have no gradient
// and no kvstore key: every device of every worker updates its own from the
// batches it sees. MXNet 1.x averages them over the devices of one process
// when the parameters are read for a checkpoint (Module.get_params) and never
// across workers: each worker keeps its own and a checkpoint holds one
// worker's. mx averages them over the devices and the workers at the end of
// every epoch, before validation and checkpoints (and before an interrupt's
// checkpoint), so that every worker validates with the same statistics and a
// checkpoint holds statistics of all the data.
#pragma once

#include <vector>

#include "executor/executor.h"
#include "kvstore/coordinator.h"

namespace mx::train {

// Sets every executor's auxiliary states to their mean over the executors
// and the workers of `job` (collective over the workers: all call it at the
// same point).
void average_aux_states(const std::vector<Executor*>& executors, kvstore::Coordinator& job);

// Copies the first executor's auxiliary states to the others (after loading
// a checkpoint into it).
void copy_aux_states(const std::vector<Executor*>& executors);

}  // namespace mx::train
