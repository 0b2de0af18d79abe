#include "kvstore/coordinator.h"

#include "base/error.h"
#include "engine/engine.h"
#include "kvstore/dist_coordinator.h"
#include "kvstore/kvstore_params.h"

namespace mx::kvstore {

bool Coordinator::on_all(bool mine) { return allreduce({mine ? 1.0 : 0.0}, Reduce::kMin)[0] > 0; }

std::vector<bool> Coordinator::on_any(const std::vector<bool>& mine) {
  std::vector<double> flags(mine.begin(), mine.end());
  flags = allreduce(std::move(flags), Reduce::kMax);
  return {flags.begin(), flags.end()};
}

std::optional<int64_t> Coordinator::agree_on_batches(std::optional<int64_t> mine) {
  if (!distributed()) return std::nullopt;
  // -1: this worker's data cannot tell; then all agree batch by batch.
  const double least = allreduce({mine ? static_cast<double>(*mine) : -1.0}, Reduce::kMin)[0];
  if (least < 0) return std::nullopt;
  return static_cast<int64_t>(least);
}

namespace {

class SingleProcess : public Coordinator {
 public:
  explicit SingleProcess(std::unique_ptr<KVStore> store) : store_(std::move(store)) {}

  int rank() const override { return 0; }
  int num_workers() const override { return 1; }
  bool distributed() const override { return false; }
  int workers_per_update() const override { return 1; }
  KVStore* kvstore() override { return store_.get(); }
  std::vector<double> allreduce(std::vector<double> values, Reduce) override { return values; }
  void barrier() override { Engine::get().wait_all(); }
  void finish() override {}
  [[noreturn]] void fail(const std::exception&) override { throw; }

 private:
  std::unique_ptr<KVStore> store_;
};

}  // namespace

std::unique_ptr<Coordinator> single_process(std::unique_ptr<KVStore> store) {
  return std::make_unique<SingleProcess>(std::move(store));
}

std::unique_ptr<Coordinator> join_job(const KVStoreParams& params, int devices,
                                      uint64_t config_hash) {
  if (!params.dist())
    return single_process(devices > 1 ? make_local_kvstore(store_type_name(params.type)) : nullptr);
  if (!(params.heartbeat_timeout > params.heartbeat_interval))
    throw InputError(str("kvstore: heartbeat_timeout (", params.heartbeat_timeout,
                         " s) must be longer than heartbeat_interval (", params.heartbeat_interval,
                         " s)"));
  DistOptions options;
  options.type = store_type_name(params.type);
  options.bigarray_bound = params.bigarray_bound;
  options.pack_threshold = params.pack_threshold;
  options.heartbeat_interval_s = params.heartbeat_interval;
  options.heartbeat_timeout_s = params.heartbeat_timeout;
  options.config_hash = config_hash;
  options.gradient_dtype = params.gradient_dtype;
  return std::make_unique<DistCoordinator>(options);
}

}  // namespace mx::kvstore
