#include "kvstore/local_kvstore.h"

#include "base/error.h"
#include "base/gpu.h"
#include "kvstore/device_merge.h"
#include "kvstore/nccl_comm.h"
#include "op/invoke.h"

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

// The `device` store on GPUs keeps each key on the GPU of its first value and
// sums the devices' pushes there with NCCL (nccl_comm.h); otherwise values
// are copied to the CPU and summed there.
bool LocalKVStore::on_gpus(const Entry& e) const { return e.stored.ctx().is_gpu(); }

void LocalKVStore::push_device_sum(int key, const std::vector<NDArray>& values, Entry& e,
                                   int priority) {
  if (values.size() == 1 && values[0].ctx() == e.merged.ctx()) {
    push_copy(values[0], e.merged, priority, "kvstore_merge");
    return;
  }
  std::vector<Context> contexts;
  for (const auto& v : values) contexts.push_back(v.ctx());
  const std::vector<int> devices = nccl_devices(contexts, key);
  const int root = nccl_rank(devices, e.merged.ctx().id, key);
  // One array per GPU: replicas sharing a GPU are summed there first.
  std::vector<NDArray> per_gpu;
  for (int device : devices) {
    std::vector<NDArray> here;
    for (const auto& v : values)
      if (v.ctx().id == device) here.push_back(v);
    if (here.size() == 1) {
      per_gpu.push_back(here[0]);
      continue;
    }
    const bool only_gpu = devices.size() == 1;
    NDArray& partial = e.partials[device];
    if (!only_gpu && partial.is_none())
      partial = NDArray(e.merged.shape(), here[0].ctx(), e.merged.dtype());
    const NDArray& sum = only_gpu ? e.merged : partial;
    const op::OpInstance add_n("add_n", {{"num_args", std::to_string(here.size())}},
                               "kvstore 'device'");
    op::invoke_forward(add_n, here, {}, {sum}, {op::OpReq::kWrite}, false);
    if (only_gpu) return;
    per_gpu.push_back(sum);
  }
#if MX_USE_CUDA
  auto& comm = comms_[devices];
  if (!comm) comm = std::make_shared<NcclComm>(devices);
  std::vector<Var*> reads;
  for (const auto& v : per_gpu) reads.push_back(v.var());
  Engine::get().push(
      [comm = comm, values = per_gpu, merged = e.merged, root](RunContext rctx) {
        // NCCL runs on streams of its own: the gradients' kernels, queued on
        // this stream (or made to wait for by it), must be done first.
        gpu::synchronize(rctx.stream, rctx.ctx.id);
        std::vector<const void*> sends;
        for (const auto& v : values) sends.push_back(v.raw_data());
        comm->reduce_sum(sends, merged.raw_data(), root, merged.size(), merged.dtype());
      },
      e.merged.ctx(), std::move(reads), {e.merged.var()}, FnProperty::kNormal, priority,
      "kvstore_nccl_reduce");
#else
  (void)root;
  (void)priority;
  throw Error("kvstore 'device': GPU arrays in a build without CUDA");
#endif
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
    const Context home = type_ == "device" && v.ctx().is_gpu() ? v.ctx() : Context::cpu();
    e.stored = NDArray(v.shape(), home, v.dtype());
    e.merged = NDArray(v.shape(), home, v.dtype());
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
    if (on_gpus(e))
      push_device_sum(keys[i], values[i], e, priority);
    else
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
  // The states live where the values are (a GPU for the device store on GPUs).
  const Context home = entries_.empty() ? Context::cpu() : entries_.begin()->second.stored.ctx();
  updater_->load_states(path, home);
}

}  // namespace mx::kvstore
