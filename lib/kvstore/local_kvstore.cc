#include "kvstore/local_kvstore.h"

#include "base/error.h"
#include "kvstore/device_merge.h"

namespace mx::kvstore {

std::unique_ptr<KVStore> make_local_kvstore(const std::string& type) {
  if (type == "local" || type == "device") return std::make_unique<LocalKVStore>(type);
  throw InputError("kvstore '" + type +
                   "' is not an in-process store; use local or device (dist_sync and "
                   "dist_async run under mpirun with mx-serve-ps)");
}

LocalKVStore::LocalKVStore(std::string type) : type_(std::move(type)) {}

LocalKVStore::Entry& LocalKVStore::entry(int key) {
  auto it = entries_.find(key);
  if (it == entries_.end())
    throw InputError(str("kvstore: key ", key, " was not initialized (call init first)"));
  return it->second;
}

void LocalKVStore::check_devices(const std::vector<NDArray>& arrays) const {
  if (type_ != "device") return;
  for (const auto& a : arrays)
    if (a.ctx().is_gpu())
      throw Error(
          "kvstore 'device' on GPUs sums with NCCL, which this build does not have; "
          "use kvstore: local");
}

void LocalKVStore::init(const std::vector<int>& keys, const std::vector<NDArray>& values) {
  if (keys.size() != values.size())
    throw InputError(str("kvstore init: ", keys.size(), " keys but ", values.size(), " values"));
  for (size_t i = 0; i < keys.size(); ++i) {
    const NDArray& v = values[i];
    if (keys[i] < 0) throw InputError(str("kvstore init: key ", keys[i], " is negative"));
    if (entries_.count(keys[i])) throw InputError(str("kvstore init: key ", keys[i], " twice"));
    if (v.dtype() != DType::kFloat32 && v.dtype() != DType::kFloat64)
      throw InputError(str("kvstore init: key ", keys[i], " is ", v.describe(),
                           "; the kvstore holds float32 or float64 arrays"));
    Entry e;
    e.stored = NDArray(v.shape(), Context::cpu(), v.dtype());
    e.merged = NDArray(v.shape(), Context::cpu(), v.dtype());
    push_copy(v, e.stored, 0, "kvstore_init");
    entries_.emplace(keys[i], std::move(e));
  }
}

void LocalKVStore::push(const std::vector<int>& keys,
                        const std::vector<std::vector<NDArray>>& values, int priority) {
  if (keys.size() != values.size())
    throw InputError(
        str("kvstore push: ", keys.size(), " keys but ", values.size(), " value lists"));
  for (size_t i = 0; i < keys.size(); ++i) {
    Entry& e = entry(keys[i]);
    check_arrays(keys[i], values[i], e.stored.shape(), e.stored.dtype(), "pushed");
    check_devices(values[i]);
    push_sum(values[i], e.merged, priority, "kvstore_merge");
    if (updater_)
      (*updater_)(keys[i], e.merged, e.stored);
    else
      push_copy(e.merged, e.stored, priority, "kvstore_store");
  }
}

void LocalKVStore::pull(const std::vector<int>& keys,
                        const std::vector<std::vector<NDArray>>& outputs, int priority) {
  if (keys.size() != outputs.size())
    throw InputError(
        str("kvstore pull: ", keys.size(), " keys but ", outputs.size(), " output lists"));
  for (size_t i = 0; i < keys.size(); ++i) {
    Entry& e = entry(keys[i]);
    check_arrays(keys[i], outputs[i], e.stored.shape(), e.stored.dtype(), "output");
    check_devices(outputs[i]);
    for (const auto& out : outputs[i]) push_copy(e.stored, out, priority, "kvstore_pull");
  }
}

void LocalKVStore::set_optimizer(std::unique_ptr<optim::Optimizer> optimizer) {
  updater_ = std::make_unique<optim::Updater>(std::move(optimizer));
}

void LocalKVStore::set_gradient_compression(const CompressionSpec& spec) {
  validate(spec);
  if (spec.enabled())
    throw InputError(
        "gradient compression applies to pushes to servers: use kvstore dist_sync "
        "or dist_async, or leave it out with kvstore " +
        type_);
}

void LocalKVStore::save_optimizer_states(const std::string& path) {
  if (!updater_) throw Error("kvstore: no optimizer to save the states of");
  updater_->save_states(path);
}

void LocalKVStore::load_optimizer_states(const std::string& path) {
  if (!updater_) throw Error("kvstore: set the optimizer before loading its states");
  updater_->load_states(path);
}

}  // namespace mx::kvstore
