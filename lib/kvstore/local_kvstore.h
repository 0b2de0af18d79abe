// The in-process stores. `local` keeps each key on the CPU: a push sums the
// devices' values there and runs the updater (or stores the sum), a pull
// copies the value to every output. `device` has the same semantics; on the
// CPU it is the same store, and when a key's value is on a GPU it keeps the
// key on that GPU: a push sums the GPUs' values into it with one NCCL
// reduction, the updater runs there (the optimizer's GPU kernels), and a
// pull copies the value to each GPU.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "kvstore/kvstore.h"
#include "kvstore/nccl_comm.h"

namespace mx::kvstore {

class LocalKVStore : public KVStore {
 public:
  explicit LocalKVStore(std::string type = "local");

  std::string type() const override { return type_; }
  void init(const std::vector<int>& keys, const std::vector<NDArray>& values) override;
  void push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
            int priority = 0) override;
  void pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outputs,
            int priority = 0) override;
  void set_optimizer(std::unique_ptr<optim::Optimizer> optimizer) override;
  void set_gradient_compression(const CompressionSpec& spec) override;
  void save_optimizer_states(const std::string& path) override;
  void load_optimizer_states(const std::string& path) override;

  // The updater, once set_optimizer was called (for tests and checkpoints).
  optim::Updater* updater() { return updater_.get(); }

 private:
  struct Entry {
    NDArray stored;  // the value, on the CPU (device store on GPUs: the first value's GPU)
    NDArray merged;  // the devices' sum of the latest push
    std::map<int, NDArray> partials;  // by GPU: the sum of replicas sharing it (device store)
  };
  Entry& entry(int key);
  bool on_gpus(const Entry& e) const;
  void push_device_sum(int key, const std::vector<NDArray>& values, Entry& e, int priority);

  std::string type_;
  std::map<int, Entry> entries_;
  std::unique_ptr<optim::Updater> updater_;
#if MX_USE_CUDA
  std::map<std::vector<int>, std::shared_ptr<NcclComm>> comms_;  // by the GPUs of a push
#endif
};

}  // namespace mx::kvstore
