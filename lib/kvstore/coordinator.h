// The job a training process belongs to: its place among the workers, the
// operations over all of them (allreduce, barrier, finish, abort) and the
// KVStore that holds the parameters. A single process and a distributed job
// (workers and mx-serve-ps servers under one mpirun) implement the same
// interface, so a training loop reads like its single-process self: in one
// process every collective returns this process's own values.
//
// The collectives are collective over the workers: every worker calls them
// in the same order with values of the same length.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kvstore/kvstore.h"
#include "kvstore/reduce.h"

namespace mx::kvstore {

struct KVStoreParams;

class Coordinator {
 public:
  virtual ~Coordinator() = default;

  // This worker's index among the workers, and their number.
  virtual int rank() const = 0;
  virtual int num_workers() const = 0;
  // Several processes (started by mpirun): messages say how to go on.
  virtual bool distributed() const = 0;
  // How many workers' gradients one optimizer step sums: all of them in
  // dist_sync, one otherwise (each push updates in dist_async).
  virtual int workers_per_update() const = 0;

  // The job's parameter store; null when one process trains on one device
  // (then nothing is summed and the trainer's updater does the store's work).
  virtual KVStore* kvstore() = 0;

  // Element-wise sum, minimum or maximum of `values` over the workers.
  virtual std::vector<double> allreduce(std::vector<double> values, Reduce op) = 0;
  // Waits for this process's engine operations (its pushes included), then
  // for every worker to get here: after it every worker's pushes are applied.
  virtual void barrier() = 0;
  // The end of a job in good order: every worker meets the others and the
  // servers are told to exit. Idempotent.
  virtual void finish() = 0;
  // A fatal error of this process, called inside the handler that caught
  // `error`: one process rethrows it (the program prints it and exits with
  // its code); a distributed job ends every rank at once with a message
  // naming this worker, so that no rank waits forever for it.
  [[noreturn]] virtual void fail(const std::exception& error) = 0;

  // Whether `mine` holds on every worker.
  bool on_all(bool mine);
  // For each flag, whether it holds on any worker.
  std::vector<bool> on_any(const std::vector<bool>& mine);
  // The number of batches every worker can train this epoch: the smallest of
  // the workers' counts (nullopt when a worker's data cannot tell, or in one
  // process, which reads to the end of its data).
  std::optional<int64_t> agree_on_batches(std::optional<int64_t> mine);
};

// One process; `store` sums the gradients of its devices (null for one device).
std::unique_ptr<Coordinator> single_process(std::unique_ptr<KVStore> store = nullptr);

// The job `params` describe: a dist store joins the workers and servers
// started by mpirun (MPI start-up and the role map; StartupError on a bad set
// of ranks, with `config_hash` — the resolved config's hash — compared across
// the workers); otherwise one process whose store sums `devices` devices'
// gradients (no store for one device).
std::unique_ptr<Coordinator> join_job(const KVStoreParams& params, int devices,
                                      uint64_t config_hash);

}  // namespace mx::kvstore
