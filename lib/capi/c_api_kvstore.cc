// The C API's KVStore functions (include/mx/c_api.h). A handle holds the
// job this process belongs to (kvstore::Coordinator): one process with a
// local or device store, or, for dist_sync / dist_async, a worker of the
// job mpirun started with mx-serve-ps servers (kvstore::join_job), whose
// store lives on the servers.
#include <memory>

#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "kvstore/kvstore_params.h"
#include "mx/c_api.h"
#include "optim/optimizer.h"

using mx::InputError;
using mx::NDArray;
using mx::str;
using namespace mx::capi;
namespace kv = mx::kvstore;

namespace {

ApiKVStore& store_handle(KVStoreHandle h) { return handle_cast<ApiKVStore>(h, "handle"); }
kv::KVStore& store_of(KVStoreHandle h) { return *store_handle(h).job->kvstore(); }

// The values of each key, keys in the order they first appear (a key given
// several times: one value per device, summed by push).
struct KeyedArrays {
  std::vector<int> keys;
  std::vector<std::vector<NDArray>> values;
};

KeyedArrays by_key(mx_uint num, const int* keys, NDArrayHandle* vals) {
  require(num == 0 || keys != nullptr, "keys is NULL");
  KeyedArrays out;
  const auto list = arrays(num, vals, "vals");
  for (mx_uint i = 0; i < num; ++i) {
    if (list[i].value.is_none()) throw InputError(str("vals[", i, "] is none"));
    size_t k = 0;
    while (k < out.keys.size() && out.keys[k] != keys[i]) ++k;
    if (k == out.keys.size()) {
      out.keys.push_back(keys[i]);
      out.values.emplace_back();
    }
    out.values[k].push_back(list[i].value);
  }
  return out;
}

std::unique_ptr<kv::Coordinator> join(const std::string& type) {
  const auto params = kv::KVStoreParams::from_strings({{"type", type}}, "kvstore");
  if (params.dist()) return kv::join_job(params, 1, 0);
  return kv::single_process(kv::make_local_kvstore(type));
}

}  // namespace

int MXKVStoreCreate(const char* type, KVStoreHandle* out) {
  return guarded("MXKVStoreCreate", [&] {
    require(type != nullptr, "type is NULL");
    require(out != nullptr, "out is NULL");
    *out = to_handle(std::make_unique<ApiKVStore>(type, join(type)));
  });
}

int MXKVStoreFree(KVStoreHandle handle) {
  return guarded("MXKVStoreFree", [&] {
    auto store = take_handle<ApiKVStore>(handle, "handle");
    // A dist store meets the other workers and tells the servers to exit;
    // should that fail, deleting the store ends the job (MPI_Abort) rather
    // than leaving other ranks waiting.
    if (store) store->job->finish();
  });
}

int MXKVStoreInit(KVStoreHandle handle, mx_uint num, const int* keys, NDArrayHandle* vals) {
  return guarded("MXKVStoreInit", [&] {
    kv::KVStore& store = store_of(handle);
    KeyedArrays k = by_key(num, keys, vals);
    std::vector<NDArray> values;
    for (size_t i = 0; i < k.keys.size(); ++i) {
      if (k.values[i].size() != 1)
        throw InputError(str("key ", k.keys[i], " is given ", k.values[i].size(),
                             " times; init takes one value per key"));
      values.push_back(k.values[i][0]);
    }
    store.init(k.keys, values);
  });
}

int MXKVStorePush(KVStoreHandle handle, mx_uint num, const int* keys, NDArrayHandle* vals,
                  int priority) {
  return guarded("MXKVStorePush", [&] {
    kv::KVStore& store = store_of(handle);
    KeyedArrays k = by_key(num, keys, vals);
    store.push(k.keys, k.values, priority);
  });
}

int MXKVStorePull(KVStoreHandle handle, mx_uint num, const int* keys, NDArrayHandle* vals,
                  int priority) {
  return guarded("MXKVStorePull", [&] {
    kv::KVStore& store = store_of(handle);
    KeyedArrays k = by_key(num, keys, vals);
    store.pull(k.keys, k.values, priority);
  });
}

int MXKVStoreSetOptimizer(KVStoreHandle handle, const char* optimizer, mx_uint num_params,
                          const char** keys, const char** vals) {
  return guarded("MXKVStoreSetOptimizer", [&] {
    kv::KVStore& store = store_of(handle);
    require(optimizer != nullptr, "optimizer is NULL");
    store.set_optimizer(mx::optim::make_optimizer(optimizer, string_pairs(num_params, keys, vals)));
  });
}

int MXKVStoreGetType(KVStoreHandle handle, const char** type) {
  return guarded("MXKVStoreGetType", [&] {
    require(type != nullptr, "type is NULL");
    *type = store_handle(handle).type.c_str();
  });
}

int MXKVStoreGetRank(KVStoreHandle handle, int* ret) {
  return guarded("MXKVStoreGetRank", [&] {
    require(ret != nullptr, "ret is NULL");
    *ret = store_handle(handle).job->rank();
  });
}

int MXKVStoreGetGroupSize(KVStoreHandle handle, int* ret) {
  return guarded("MXKVStoreGetGroupSize", [&] {
    require(ret != nullptr, "ret is NULL");
    *ret = store_handle(handle).job->num_workers();
  });
}

int MXKVStoreBarrier(KVStoreHandle handle) {
  return guarded("MXKVStoreBarrier", [&] { store_handle(handle).job->barrier(); });
}

int MXKVStoreIsWorkerNode(int* ret) {
  return guarded("MXKVStoreIsWorkerNode", [&] {
    require(ret != nullptr, "ret is NULL");
    *ret = 1;
  });
}

int MXKVStoreIsServerNode(int* ret) {
  return guarded("MXKVStoreIsServerNode", [&] {
    require(ret != nullptr, "ret is NULL");
    *ret = 0;
  });
}

int MXKVStoreIsSchedulerNode(int* ret) {
  return guarded("MXKVStoreIsSchedulerNode", [&] {
    require(ret != nullptr, "ret is NULL");
    *ret = 0;
  });
}
