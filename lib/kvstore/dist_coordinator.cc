#include "kvstore/dist_coordinator.h"

#include <exception>

#include "base/error.h"
#include "engine/engine.h"

namespace mx::kvstore {

RankInfo worker_rank_info(const DistOptions& options) {
  if (!(options.heartbeat_interval_s > 0) ||
      !(options.heartbeat_timeout_s > options.heartbeat_interval_s))
    throw InputError(str("kvstore heartbeat: interval (", options.heartbeat_interval_s,
                         " s) must be > 0 and below the time-out (", options.heartbeat_timeout_s,
                         " s)"));
  RankInfo self;
  self.role = Role::kWorker;
  self.config_hash = options.config_hash;
  self.sync = options.type == "dist_sync";
  self.heartbeat_interval_s = options.heartbeat_interval_s;
  self.heartbeat_timeout_s = options.heartbeat_timeout_s;
  return self;
}

DistCoordinator::DistCoordinator(const DistOptions& options)
    : sync_(options.type == "dist_sync"),
      comm_(std::make_shared<Communicator>(worker_rank_info(options))),
      store_(std::make_unique<DistKVStore>(comm_, options)) {}

DistCoordinator::~DistCoordinator() {
  if (finished_) return;
  if (std::uncaught_exceptions() > 0)
    abort(str("kvstore: worker ", rank(), " stopped on an error before finishing; ending the job"));
  try {
    finish();
  } catch (const std::exception& e) {
    abort(str("kvstore: worker ", rank(), " could not finish: ", e.what()));
  }
}

std::vector<double> DistCoordinator::allreduce(std::vector<double> values, Reduce op) {
  return comm_->wait_allreduce(std::move(values), op);
}

void DistCoordinator::barrier() {
  Engine::get().wait_all();
  comm_->wait_barrier();
}

void DistCoordinator::finish() {
  if (finished_) return;
  finished_ = true;
  barrier();
  store_->leave_servers();
  comm_->shutdown();
}

void DistCoordinator::fail(const std::exception& error) {
  const auto* known = dynamic_cast<const Error*>(&error);
  abort(str("worker ", rank(), ": ", error.what()), known != nullptr ? known->exit_code() : 1);
}

void DistCoordinator::abort(const std::string& message, int exit_code) {
  comm_->abort(message, exit_code);
}

}  // namespace mx::kvstore
