// The KVStore (MXNet paper, section 3.3): parameters and gradients by integer
// key, shared by the devices of one process (level 1) and, in the dist
// stores, across processes through parameter servers (level 2).
//
// push(keys, values) sums the values of each key over the devices (and, in
// dist_sync, over the workers) and applies the updater to the stored value
// where it lives (in the process for local/device, on the servers for
// dist); without an updater the sum replaces the stored value. pull(keys,
// outputs) copies the stored value to every output. Both are engine
// operations on the arrays' and the key's variables, so they return at once
// and a key's pull is ordered after its earlier pushes; `priority` orders
// ready operations (MXNet's trainers use -layer index, so the first layers'
// weights come back first).
//
// Keys, values and outputs are float32 or float64 arrays; every array of a
// key has the key's shape and dtype. A store is driven from one thread. It
// holds parameters only: the job's ranks and collectives are the
// Coordinator's (coordinator.h), which owns the store.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kvstore/gradient_compression.h"
#include "ndarray/ndarray.h"
#include "optim/optimizer.h"

namespace mx::kvstore {

class KVStore {
 public:
  virtual ~KVStore() = default;

  // "local", "device", "dist_sync", "dist_async".
  virtual std::string type() const = 0;

  // Sets the initial value of each key (values[i] for keys[i]). In a dist
  // store worker 0's values reach the servers and every worker waits for
  // them (a barrier), so all start from the same parameters.
  virtual void init(const std::vector<int>& keys, const std::vector<NDArray>& values) = 0;
  // values[i]: the arrays of keys[i], one per device.
  virtual void push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                    int priority = 0) = 0;
  // outputs[i]: where keys[i]'s value goes, one array per device.
  virtual void pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outputs,
                    int priority = 0) = 0;
  // push, then pull of the same keys.
  void pushpull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
                const std::vector<std::vector<NDArray>>& outputs, int priority = 0) {
    push(keys, values, priority);
    pull(keys, outputs, priority);
  }

  // Whether this key's pushes and pulls given in one call with other such
  // keys travel together as one message (dist stores: keys of at most the
  // pack threshold's bytes, packing.h). Callers that push keys one at a
  // time to overlap communication can push these together instead.
  virtual bool packs(int key) const {
    (void)key;
    return false;
  }

  // The updater runs where the values live: here for local/device, on the
  // servers for dist (the optimizer is serialized and rebuilt there).
  virtual void set_optimizer(std::unique_ptr<optim::Optimizer> optimizer) = 0;
  // 2-bit compression of pushes; only the dist stores compress.
  virtual void set_gradient_compression(const CompressionSpec& spec) = 0;
  // The optimizer's states and counters where the updater runs (for checkpoints):
  // local writes `path` (Updater::save_states); dist asks every server to
  // write `path`.server<i>of<S> on its host. In a dist store save is worker
  // 0's alone (others return at once); set_optimizer and load are collective
  // over the workers and throw on every worker when they fail.
  virtual void save_optimizer_states(const std::string& path) = 0;
  virtual void load_optimizer_states(const std::string& path) = 0;
};

// "local" or "device" (in-process stores). The dist stores need MPI and a
// role map: see DistKVStore (dist_kvstore.h). Throws InputError for other names.
std::unique_ptr<KVStore> make_local_kvstore(const std::string& type);

}  // namespace mx::kvstore
