// The worker side of dist_sync / dist_async (level 2 of the KVStore): the
// devices' values of a key are summed in the process (level 1), then pushed
// to the servers that hold the key's parts; pulls fetch the parts back.
//
// A push is one engine operation that reads the summed value and writes the
// key's variable; it completes (on the communication thread) when every
// server holding a part has replied — in dist_sync only after the round's
// update — so a later pull of the key, which also writes that variable, sees
// the update. A single CPU value is sent, and a single CPU output received,
// without a copy. Compression quantizes each part into 2-bit codes with a
// per-key residual before sending.
//
// Keys of at most `pack_threshold` bytes held whole by one server are
// packed (packing.h): those of one push or pull call that go to the same
// server make one engine operation and one message, answered by one.
//
// The store lives inside a DistCoordinator (dist_coordinator.h), which owns
// the job: MPI start-up with the servers, collectives, finish and abort.
// init, set_optimizer and load_optimizer_states are collective over the
// workers: every worker calls them in the same order.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvstore/communicator.h"
#include "kvstore/kvstore.h"
#include "kvstore/packing.h"
#include "kvstore/partition.h"
#include "kvstore/push_encoding.h"

namespace mx::kvstore {

struct DistOptions {
  std::string type = "dist_sync";  // or "dist_async"
  // Keys with this many elements or more are split over all servers.
  int64_t bigarray_bound = kDefaultBigArrayBound;
  double heartbeat_interval_s = 1.0;
  // Silence after which a rank counts as stopped or hung and the job ends.
  double heartbeat_timeout_s = 10.0;
  // Keys of at most this many bytes pushed or pulled in one call travel
  // together per server (0: every key alone).
  int64_t pack_threshold = kDefaultPackThreshold;
  // Hash of the worker's resolved config; all workers must agree.
  uint64_t config_hash = 0;
  // The type float32 gradients travel in to the servers (kvstore.gradient_dtype):
  // bfloat16 or float16 halve the bytes; servers sum in float32.
  DType gradient_dtype = DType::kFloat32;
};

class DistKVStore : public KVStore {
 public:
  // The worker's store over `comm`, whose messages it takes from now on.
  DistKVStore(std::shared_ptr<Communicator> comm, const DistOptions& options);

  std::string type() const override { return options_.type; }
  void init(const std::vector<int>& keys, const std::vector<NDArray>& values) override;
  void push(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& values,
            int priority = 0) override;
  void pull(const std::vector<int>& keys, const std::vector<std::vector<NDArray>>& outputs,
            int priority = 0) override;
  void set_optimizer(std::unique_ptr<optim::Optimizer> optimizer) override;
  void set_gradient_compression(const CompressionSpec& spec) override;
  void save_optimizer_states(const std::string& path) override;
  void load_optimizer_states(const std::string& path) override;
  bool packs(int key) const override;

  // Packed messages this worker has sent (for tests and benchmarks).
  int64_t packed_messages() const;

  // Waits for this worker's pushes and pulls (after them every push of this
  // worker has been applied).
  void wait_for_keys();
  // Tells the servers this worker is done (after the workers' last barrier)
  // and stops watching them.
  void leave_servers();

 private:
  struct Key {
    Shape shape;
    DType dtype = DType::kFloat32;
    std::vector<KeyPart> parts;
    VarHandle var;     // orders the key's pushes and pulls
    NDArray merged;    // the devices' sum (several devices, or not on the CPU)
    NDArray pulled;    // where values arrive when they cannot go straight to the output
    NDArray residual;  // 2-bit compression
    NDArray codes;     // 2-bit codes, or the gradient in 16 bits (gradient_dtype)
    std::vector<int64_t> code_offsets;  // first word of each part in `codes`
  };
  struct Pending;
  // A key of a push or pull call: what to send (push) or where values go (pull).
  struct Item {
    int k = -1;
    Key* kv = nullptr;
    NDArray array;
    PushEncoding encoding = PushEncoding::kValues;
  };
  Key& key(int k);
  bool packable(const Key& kv) const;
  // The items of one call cut into groups that travel as one operation and
  // message: packable keys by server (in call order, up to kMaxPackBytes),
  // every other key alone, and every key alone when a key repeats.
  std::vector<std::vector<Item>> groups(std::vector<Item> items) const;
  void push_one(const Item& item, int priority);
  void push_packed(std::vector<Item> items, int priority);
  void pull_one(const Item& item, int priority);
  void pull_packed(std::vector<Item> items, int priority);
  // The header of part `p` of a key; `payload` gets the bytes to send with it.
  Header part_header(MsgType type, int k, const Key& key, size_t p, const std::byte* data,
                     PushEncoding encoding, const std::byte** payload) const;
  void send_pack(int server, PackWriter& pack);
  // Sends one group's init or push requests, each with its item's values, as
  // one packed message; `id_of` gives each entry's request id.
  void send_values_packed(MsgType type, const std::vector<Item>& items,
                          const std::function<int64_t(const Item&)>& id_of);
  // Residual and code buffers of a key, when compression is on; the buffer
  // of its 16-bit gradient, when gradients travel narrowed.
  void prepare_compression(Key& kv) const;
  // Sends a control message to every server and waits for the replies.
  void to_all_servers(MsgType type, const std::string& text);
  // Collective: worker 0 sends the message to every server; all workers
  // return once it is done, or all throw when it failed.
  void from_worker0(MsgType type, const std::string& text, const std::string& what);
  // Registers a request that completes after `replies` replies.
  int64_t expect(int replies, std::byte* base, size_t element_bytes,
                 std::function<void(std::exception_ptr)> done);
  void on_message(const Header& h, int source, std::string text);
  // One reply or finished send of request `id`; false when there is no such request.
  bool count_down(int64_t id, const std::string& error);
  void* payload_buffer(const Header& h, int source);
  // Where a reply's values go (checked against the request); aborts the job when nowhere.
  std::byte* destination(const Header& h, int source);
  // The replies of a packed message from `source`.
  void on_packed(const Header& h, int source);
  void send_parts(MsgType type, int k, const Key& key, const std::byte* data, int64_t id,
                  PushEncoding encoding);

  int rank() const { return comm_->self().index; }

  DistOptions options_;
  CompressionSpec compression_;
  std::shared_ptr<Communicator> comm_;
  std::map<int, Key> keys_;
  mutable std::mutex mutex_;  // guards pending_ and next_id_
  std::map<int64_t, std::shared_ptr<Pending>> pending_;
  int64_t next_id_ = 1;
  // Packed replies being received, by (server rank, message id); guarded by mutex_.
  std::map<std::pair<int, int64_t>, PackBytes> packs_in_;
  int64_t packed_sent_ = 0;  // guarded by mutex_
};

}  // namespace mx::kvstore
