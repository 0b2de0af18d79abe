// A worker of a distributed job (dist_sync, dist_async): the workers and the
// mx-serve-ps servers started by one mpirun. The coordinator owns the
// worker's side of the job: the Communicator (MPI start-up, the role map,
// heartbeats), the collectives over the workers, the end in good order
// (finish: a last barrier, then the servers are told to exit) and the end
// on an error (MPI_Abort, so that no rank waits forever), and the DistKVStore
// that holds the parameters on the servers.
#pragma once

#include <memory>
#include <string>

#include "kvstore/coordinator.h"
#include "kvstore/dist_kvstore.h"

namespace mx::kvstore {

// What a worker with `options` publishes to the job at start-up; throws
// InputError for heartbeat settings that cannot work.
RankInfo worker_rank_info(const DistOptions& options);

class DistCoordinator : public Coordinator {
 public:
  // Joins the job as a worker; throws StartupError (exit code 2) when the
  // ranks cannot run together, InputError for bad options.
  explicit DistCoordinator(const DistOptions& options);
  // finish(), or ending the job when an exception is unwinding.
  ~DistCoordinator() override;

  int rank() const override { return comm_->self().index; }
  int num_workers() const override { return comm_->roles().num_workers(); }
  bool distributed() const override { return true; }
  int workers_per_update() const override { return sync_ ? num_workers() : 1; }
  KVStore* kvstore() override { return store_.get(); }
  DistKVStore& store() { return *store_; }
  const RoleMap& roles() const { return comm_->roles(); }

  std::vector<double> allreduce(std::vector<double> values, Reduce op) override;
  void barrier() override;
  // Waits for this worker's operations, meets the other workers, tells the
  // servers it is done and finalizes MPI.
  void finish() override;
  [[noreturn]] void fail(const std::exception& error) override;
  // Ends every rank of the job with `message` (MPI_Abort).
  [[noreturn]] void abort(const std::string& message, int exit_code = 1);

 private:
  bool sync_;
  std::shared_ptr<Communicator> comm_;
  std::unique_ptr<DistKVStore> store_;
  bool finished_ = false;
};

}  // namespace mx::kvstore
