#include "kvstore/dist_kvstore.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <future>

#include "base/error.h"
#include "engine/var.h"
#include "kvstore/device_merge.h"
#include "kvstore/optimizer_spec.h"

namespace mx::kvstore {

struct DistKVStore::Pending {
  int remaining = 0;
  std::byte* base = nullptr;  // pulls: where element 0 of the key goes
  size_t element_bytes = 0;
  std::function<void(std::exception_ptr)> done;
  std::string error;
};

namespace {

// Runs `start(done)` and blocks until done() is called; re-throws its error.
void wait_for(const std::function<void(std::function<void(std::exception_ptr)>)>& start) {
  auto promise = std::make_shared<std::promise<void>>();
  auto future = promise->get_future();
  start([promise](std::exception_ptr error) {
    if (error)
      promise->set_exception(error);
    else
      promise->set_value();
  });
  future.get();
}

// A callback to call `n` times; the n-th call runs `done` with the first error.
std::function<void(std::exception_ptr)> after_all(size_t n,
                                                  std::function<void(std::exception_ptr)> done) {
  struct State {
    std::mutex mutex;
    size_t remaining;
    std::exception_ptr error;
    std::function<void(std::exception_ptr)> done;
  };
  auto state = std::make_shared<State>();
  state->remaining = n;
  state->done = std::move(done);
  return [state](std::exception_ptr error) {
    {
      std::lock_guard lock(state->mutex);
      if (error && !state->error) state->error = error;
      if (--state->remaining > 0) return;
    }
    state->done(state->error);
  };
}

}  // namespace

DistKVStore::DistKVStore(std::shared_ptr<Communicator> comm, const DistOptions& options)
    : options_(options), comm_(std::move(comm)) {
  if (options.type != "dist_sync" && options.type != "dist_async")
    throw InputError("kvstore '" + options.type + "' is not a dist store (dist_sync, dist_async)");
  if (options.bigarray_bound < 1)
    throw InputError(str("kvstore big-array bound must be >= 1, not ", options.bigarray_bound));
  if (options.pack_threshold < 0 || options.pack_threshold > kMaxPackBytes)
    throw InputError(str("kvstore pack threshold must be in [0, ", kMaxPackBytes, "] bytes, not ",
                         options.pack_threshold));
  narrow_encoding(options.gradient_dtype);  // float32, bfloat16 or float16
  comm_->start([this](const Header& h, int source) { return payload_buffer(h, source); },
               [this](const Header& h, int source, std::string text) {
                 on_message(h, source, std::move(text));
               });
}

DistKVStore::Key& DistKVStore::key(int k) {
  auto it = keys_.find(k);
  if (it == keys_.end())
    throw InputError(str("kvstore: key ", k, " was not initialized (call init first)"));
  return it->second;
}

int64_t DistKVStore::expect(int replies, std::byte* base, size_t element_bytes,
                            std::function<void(std::exception_ptr)> done) {
  auto p = std::make_shared<Pending>();
  p->remaining = replies;
  p->base = base;
  p->element_bytes = element_bytes;
  p->done = std::move(done);
  std::lock_guard lock(mutex_);
  const int64_t id = next_id_++;
  pending_[id] = std::move(p);
  return id;
}

std::byte* DistKVStore::destination(const Header& h, int source) {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(h.id);
  if (h.type != MsgType::kReply || it == pending_.end() || it->second->base == nullptr ||
      static_cast<size_t>(h.bytes) != static_cast<size_t>(h.count) * it->second->element_bytes)
    comm_->abort(str("kvstore worker: unexpected data from ", comm_->roles().describe(source), " (",
                     h.bytes, " bytes for request ", h.id, ", key ", h.key, ")"));
  return it->second->base + static_cast<size_t>(h.offset) * it->second->element_bytes;
}

void* DistKVStore::payload_buffer(const Header& h, int source) {
  if (h.type == MsgType::kPacked) {
    std::lock_guard lock(mutex_);
    PackBytes& buffer = packs_in_[{source, h.id}] = receive_buffer(h);
    return buffer.data.get();
  }
  return destination(h, source);
}

void DistKVStore::on_packed(const Header& h, int source) {
  PackBytes pack;
  {
    std::lock_guard lock(mutex_);
    auto it = packs_in_.find({source, h.id});
    if (it == packs_in_.end())
      comm_->abort(str("kvstore worker: packed message ", h.id, " from ",
                       comm_->roles().describe(source), " came without its payload"));
    pack = std::move(it->second);
    packs_in_.erase(it);
  }
  std::vector<PackedEntry> entries;
  try {
    entries = unpack(h, pack.data.get());
  } catch (const Error& e) {
    comm_->abort(str(e.what(), " (from ", comm_->roles().describe(source), ")"));
  }
  for (const PackedEntry& e : entries) {
    std::string error;
    if (e.header.type == MsgType::kError)
      error.assign(reinterpret_cast<const char*>(e.data), static_cast<size_t>(e.header.bytes));
    else if (e.header.type != MsgType::kReply)
      comm_->abort(str("kvstore worker: a packed ", msg_type_name(e.header.type), " from ",
                       comm_->roles().describe(source), ", where only replies may be"));
    else if (e.header.bytes > 0)
      std::memcpy(destination(e.header, source), e.data, static_cast<size_t>(e.header.bytes));
    if (!count_down(e.header.id, error))
      comm_->abort(str("kvstore worker: a reply to unknown request ", e.header.id, " from ",
                       comm_->roles().describe(source)));
  }
}

void DistKVStore::on_message(const Header& h, int source, std::string text) {
  if (h.type == MsgType::kPacked) {
    on_packed(h, source);
    return;
  }
  if (h.type != MsgType::kReply && h.type != MsgType::kError)
    comm_->abort(str("kvstore worker: unexpected ", msg_type_name(h.type), " message from ",
                     comm_->roles().describe(source)));
  if (!count_down(h.id, h.type == MsgType::kError ? text : std::string()))
    comm_->abort(str("kvstore worker: a reply to unknown request ", h.id, " from ",
                     comm_->roles().describe(source)));
}

bool DistKVStore::count_down(int64_t id, const std::string& error) {
  std::shared_ptr<Pending> p;
  {
    std::lock_guard lock(mutex_);
    auto it = pending_.find(id);
    if (it == pending_.end()) return false;
    p = it->second;
    if (!error.empty() && p->error.empty()) p->error = error;
    if (--p->remaining > 0) return true;
    pending_.erase(it);
  }
  p->done(p->error.empty() ? nullptr : std::make_exception_ptr(Error("kvstore: " + p->error)));
  return true;
}

Header DistKVStore::part_header(MsgType type, int k, const Key& key, size_t p,
                                const std::byte* data, PushEncoding encoding,
                                const std::byte** payload) const {
  const KeyPart& part = key.parts[p];
  const size_t element_bytes = dtype_size(key.dtype);
  Header h;
  h.type = type;
  h.key = k;
  h.dtype = static_cast<int32_t>(key.dtype);
  h.offset = part.offset;
  h.count = part.count;
  h.total = key.shape.size();
  *payload = nullptr;
  if (type == MsgType::kInit || type == MsgType::kPush) {
    h.compressed = static_cast<int32_t>(encoding);
    if (encoding == PushEncoding::kTwoBit) {
      h.threshold = compression_.threshold;
      h.bytes = compressed_words(part.count) * static_cast<int64_t>(sizeof(uint32_t));
      *payload = data + static_cast<size_t>(key.code_offsets[p]) * sizeof(uint32_t);
    } else if (is_narrow(encoding)) {
      h.bytes = part.count * 2;  // `data` is the whole key in 16 bits
      *payload = data + static_cast<size_t>(part.offset) * 2;
    } else {
      h.bytes = part.count * static_cast<int64_t>(element_bytes);
      *payload = data + static_cast<size_t>(part.offset) * element_bytes;
    }
  }
  return h;
}

void DistKVStore::send_parts(MsgType type, int k, const Key& key, const std::byte* data, int64_t id,
                             PushEncoding encoding) {
  for (size_t i = 0; i < key.parts.size(); ++i) {
    const std::byte* payload = nullptr;
    Header h = part_header(type, k, key, i, data, encoding, &payload);
    h.id = id;
    // A request with data completes when its sends have finished too, so
    // the caller may reuse the array only once MPI is done with it.
    std::function<void()> on_sent;
    if (payload) on_sent = [this, id] { count_down(id, std::string()); };
    comm_->send(comm_->roles().server_rank(key.parts[i].server), h, payload, std::string(),
                std::move(on_sent));
  }
}

void DistKVStore::send_pack(int server, PackWriter& pack) {
  int64_t id = 0;
  {
    std::lock_guard lock(mutex_);
    id = next_id_++;
    ++packed_sent_;
  }
  const Header h = pack.header(id);
  // The values were copied into the pack: only the pack must outlive the send.
  auto bytes = std::make_shared<PackBytes>(pack.take());
  comm_->send(comm_->roles().server_rank(server), h, bytes->data.get(), std::string(), [bytes] {});
}

int64_t DistKVStore::packed_messages() const {
  std::lock_guard lock(mutex_);
  return packed_sent_;
}

bool DistKVStore::packable(const Key& kv) const {
  return kv.parts.size() == 1 &&
         kv.shape.size() * static_cast<int64_t>(dtype_size(kv.dtype)) <= options_.pack_threshold;
}

bool DistKVStore::packs(int k) const {
  auto it = keys_.find(k);
  return it != keys_.end() && packable(it->second);
}

std::vector<std::vector<DistKVStore::Item>> DistKVStore::groups(std::vector<Item> items) const {
  std::vector<std::vector<Item>> out;
  std::vector<int> seen;
  for (const Item& item : items) seen.push_back(item.k);
  std::sort(seen.begin(), seen.end());
  const bool repeats = std::adjacent_find(seen.begin(), seen.end()) != seen.end();
  std::map<int, size_t> open;  // server -> index in `out` of its group being filled
  std::map<int, int64_t> open_bytes;
  for (Item& item : items) {
    if (repeats || !packable(*item.kv)) {
      out.push_back({std::move(item)});
      continue;
    }
    const int server = item.kv->parts[0].server;
    const int64_t bytes = packed_entry_bytes(item.kv->shape.size() *
                                             static_cast<int64_t>(dtype_size(item.kv->dtype)));
    auto it = open.find(server);
    if (it == open.end() || open_bytes[server] + bytes > kMaxPackBytes) {
      open[server] = out.size();
      open_bytes[server] = 0;
      out.emplace_back();
    }
    open_bytes[server] += bytes;
    out[open[server]].push_back(std::move(item));
  }
  return out;
}

void DistKVStore::init(const std::vector<int>& keys, const std::vector<NDArray>& values) {
  if (keys.size() != values.size())
    throw InputError(str("kvstore init: ", keys.size(), " keys but ", values.size(), " values"));
  const int servers = comm_->roles().num_servers();
  for (size_t i = 0; i < keys.size(); ++i) {
    const NDArray& v = values[i];
    if (keys[i] < 0) throw InputError(str("kvstore init: key ", keys[i], " is negative"));
    if (keys_.count(keys[i])) throw InputError(str("kvstore init: key ", keys[i], " twice"));
    if (v.size() == 0) throw InputError(str("kvstore init: key ", keys[i], " has no elements"));
    if (v.dtype() != DType::kFloat32 && v.dtype() != DType::kFloat64)
      throw InputError(str("kvstore init: key ", keys[i], " is ", v.describe(),
                           "; the kvstore holds float32 or float64 arrays"));
    Key key;
    key.shape = v.shape();
    key.dtype = v.dtype();
    key.parts = partition_key(keys[i], v.size(), servers, options_.bigarray_bound);
    key.var = Engine::get().new_var();
    if (compression_.enabled() && key.dtype != DType::kFloat32)
      throw InputError(str("2-bit gradient compression needs float32 values; key ", keys[i], " is ",
                           dtype_name(key.dtype)));
    if (options_.gradient_dtype != DType::kFloat32 && key.dtype != DType::kFloat32)
      throw InputError(str("gradients pushed as ", dtype_name(options_.gradient_dtype),
                           " narrow float32 values; key ", keys[i], " is ", dtype_name(key.dtype)));
    prepare_compression(key);
    keys_.emplace(keys[i], std::move(key));
  }
  if (rank() == 0) {
    // Worker 0 sends the values; small keys travel packed, as pushes do.
    std::vector<Item> items;
    for (size_t i = 0; i < keys.size(); ++i) {
      NDArray source = values[i].ctx().is_gpu() ? values[i].copy_to(Context::cpu()) : values[i];
      source.wait_to_read();
      items.push_back(Item{keys[i], &keys_.at(keys[i]), source, PushEncoding::kValues});
    }
    const std::vector<std::vector<Item>> grouped = groups(std::move(items));
    int replies = 0;
    for (const auto& group : grouped)
      replies += group.size() == 1 ? 2 * static_cast<int>(group[0].kv->parts.size())  // and sends
                                   : static_cast<int>(group.size());
    wait_for([&](auto done) {
      const int64_t id = expect(replies, nullptr, 0, std::move(done));
      for (const auto& group : grouped) {
        if (group.size() == 1) {
          send_parts(MsgType::kInit, group[0].k, *group[0].kv,
                     static_cast<const std::byte*>(group[0].array.raw_data()), id,
                     PushEncoding::kValues);
          continue;
        }
        send_values_packed(MsgType::kInit, group, [id](const Item&) { return id; });
      }
    });
  }
  wait_for_keys();
  comm_->wait_barrier();
}

void DistKVStore::push(const std::vector<int>& keys,
                       const std::vector<std::vector<NDArray>>& values, int priority) {
  if (keys.size() != values.size())
    throw InputError(
        str("kvstore push: ", keys.size(), " keys but ", values.size(), " value lists"));
  std::vector<Item> items;
  for (size_t i = 0; i < keys.size(); ++i) {
    const int k = keys[i];
    Key& kv = key(k);
    check_arrays(k, values[i], kv.shape, kv.dtype, "pushed");
    NDArray source = values[i][0];
    if (values[i].size() > 1 || source.ctx().is_gpu()) {
      if (kv.merged.is_none()) kv.merged = NDArray(kv.shape, Context::cpu(), kv.dtype);
      push_sum(values[i], kv.merged, priority, "kvstore_merge");
      source = kv.merged;
    }
    PushEncoding encoding = PushEncoding::kValues;
    if (compression_.enabled()) {
      encoding = PushEncoding::kTwoBit;
      const float threshold = compression_.threshold;
      Engine::get().push(
          [source, residual = kv.residual, codes = kv.codes, parts = kv.parts,
           offsets = kv.code_offsets, threshold](RunContext) {
            for (size_t p = 0; p < parts.size(); ++p)
              quantize_2bit(
                  source.data<float>() + parts[p].offset, residual.data<float>() + parts[p].offset,
                  static_cast<uint32_t*>(codes.raw_data()) + offsets[p], parts[p].count, threshold);
          },
          Context::cpu(), {source.var()}, {kv.residual.var(), kv.codes.var()}, FnProperty::kNormal,
          priority, "kvstore_compress");
      source = kv.codes;
    } else if (const PushEncoding narrow = narrow_encoding(options_.gradient_dtype);
               is_narrow(narrow)) {
      // The gradient rounded to 16 bits on its way to the servers.
      encoding = narrow;
      Engine::get().push(
          [source, codes = kv.codes, narrow](RunContext) {
            narrow_values(narrow, source.data<float>(), codes.raw_data(), source.size());
          },
          Context::cpu(), {source.var()}, {kv.codes.var()}, FnProperty::kNormal, priority,
          "kvstore_narrow");
      source = kv.codes;
    }
    items.push_back(Item{k, &kv, source, encoding});
  }
  for (auto& group : groups(std::move(items))) {
    if (group.size() == 1)
      push_one(group[0], priority);
    else
      push_packed(std::move(group), priority);
  }
}

void DistKVStore::push_one(const Item& item, int priority) {
  Engine::get().push_async(
      [this, k = item.k, &kv = *item.kv, source = item.array, encoding = item.encoding](
          RunContext, OnComplete on_complete) {
        // Each part: the server's reply and the end of the send.
        const int64_t id = expect(2 * static_cast<int>(kv.parts.size()), nullptr, 0,
                                  [on_complete](std::exception_ptr e) { on_complete(e); });
        send_parts(MsgType::kPush, k, kv, static_cast<const std::byte*>(source.raw_data()), id,
                   encoding);
      },
      Context::cpu(), {item.array.var()}, {item.kv->var.get()}, FnProperty::kCopy, priority,
      str("kvstore_push(", item.k, ")"));
}

void DistKVStore::push_packed(std::vector<Item> items, int priority) {
  std::vector<Var*> reads, writes;
  for (const Item& item : items) {
    reads.push_back(item.array.var());
    writes.push_back(item.kv->var.get());
  }
  const std::string name =
      str("kvstore_push_packed(", items.size(), " keys from ", items[0].k, ")");
  Engine::get().push_async(
      [this, items = std::move(items)](RunContext, OnComplete on_complete) {
        // One reply per key; the values are copied into the pack at once.
        auto done =
            after_all(items.size(), [on_complete](std::exception_ptr e) { on_complete(e); });
        send_values_packed(MsgType::kPush, items,
                           [&](const Item&) { return expect(1, nullptr, 0, done); });
      },
      Context::cpu(), reads, writes, FnProperty::kCopy, priority, name);
}

void DistKVStore::send_values_packed(MsgType type, const std::vector<Item>& items,
                                     const std::function<int64_t(const Item&)>& id_of) {
  PackWriter pack;
  int64_t bytes = 0;
  for (const Item& item : items) bytes += packed_entry_bytes(item.array.bytes());
  pack.reserve(bytes);
  for (const Item& item : items) {
    const std::byte* payload = nullptr;
    Header h =
        part_header(type, item.k, *item.kv, 0, static_cast<const std::byte*>(item.array.raw_data()),
                    item.encoding, &payload);
    h.id = id_of(item);
    pack.add(h, payload);
  }
  send_pack(items[0].kv->parts[0].server, pack);
}

void DistKVStore::pull(const std::vector<int>& keys,
                       const std::vector<std::vector<NDArray>>& outputs, int priority) {
  if (keys.size() != outputs.size())
    throw InputError(
        str("kvstore pull: ", keys.size(), " keys but ", outputs.size(), " output lists"));
  std::vector<Item> items;
  std::vector<bool> direct;
  for (size_t i = 0; i < keys.size(); ++i) {
    const int k = keys[i];
    Key& kv = key(k);
    check_arrays(k, outputs[i], kv.shape, kv.dtype, "output");
    direct.push_back(outputs[i].size() == 1 && !outputs[i][0].ctx().is_gpu());
    if (!direct[i] && kv.pulled.is_none()) kv.pulled = NDArray(kv.shape, Context::cpu(), kv.dtype);
    items.push_back(Item{k, &kv, direct[i] ? outputs[i][0] : kv.pulled, PushEncoding::kValues});
  }
  for (auto& group : groups(std::move(items))) {
    if (group.size() == 1)
      pull_one(group[0], priority);
    else
      pull_packed(std::move(group), priority);
  }
  // The devices' copies after the pulls that fill `pulled`.
  for (size_t i = 0; i < keys.size(); ++i)
    if (!direct[i])
      for (const auto& out : outputs[i])
        push_copy(keys_.at(keys[i]).pulled, out, priority, "kvstore_pull_copy");
}

void DistKVStore::pull_one(const Item& item, int priority) {
  Engine::get().push_async(
      [this, k = item.k, &kv = *item.kv, target = item.array](RunContext, OnComplete on_complete) {
        const int64_t id =
            expect(static_cast<int>(kv.parts.size()), static_cast<std::byte*>(target.raw_data()),
                   dtype_size(kv.dtype), [on_complete](std::exception_ptr e) { on_complete(e); });
        send_parts(MsgType::kPull, k, kv, nullptr, id, PushEncoding::kValues);
      },
      Context::cpu(), {}, {item.array.var(), item.kv->var.get()}, FnProperty::kCopy, priority,
      str("kvstore_pull(", item.k, ")"));
}

void DistKVStore::pull_packed(std::vector<Item> items, int priority) {
  std::vector<Var*> writes;
  for (const Item& item : items) {
    writes.push_back(item.array.var());
    writes.push_back(item.kv->var.get());
  }
  const std::string name =
      str("kvstore_pull_packed(", items.size(), " keys from ", items[0].k, ")");
  Engine::get().push_async(
      [this, items = std::move(items)](RunContext, OnComplete on_complete) {
        auto done =
            after_all(items.size(), [on_complete](std::exception_ptr e) { on_complete(e); });
        PackWriter pack;
        pack.reserve(static_cast<int64_t>(items.size()) * packed_entry_bytes(0));
        for (const Item& item : items) {
          const std::byte* payload = nullptr;
          Header h = part_header(MsgType::kPull, item.k, *item.kv, 0, nullptr,
                                 PushEncoding::kValues, &payload);
          h.id = expect(1, static_cast<std::byte*>(item.array.raw_data()),
                        dtype_size(item.kv->dtype), done);
          pack.add(h, nullptr);
        }
        send_pack(items[0].kv->parts[0].server, pack);
      },
      Context::cpu(), {}, writes, FnProperty::kCopy, priority, name);
}

void DistKVStore::to_all_servers(MsgType type, const std::string& text) {
  const RoleMap& roles = comm_->roles();
  wait_for([&](auto done) {
    const int64_t id = expect(roles.num_servers(), nullptr, 0, std::move(done));
    for (int s = 0; s < roles.num_servers(); ++s) {
      Header h;
      h.type = type;
      h.id = id;
      h.bytes = static_cast<int64_t>(text.size());
      comm_->send(roles.server_rank(s), h, nullptr, text);
    }
  });
}

void DistKVStore::from_worker0(MsgType type, const std::string& text, const std::string& what) {
  wait_for_keys();  // this worker's pushes first: the request applies after them
  std::string error;
  if (rank() == 0) {
    try {
      to_all_servers(type, text);
    } catch (const Error& e) {
      error = e.what();
    }
  }
  // Every worker learns the outcome, so none waits for one that has failed.
  const double ok = comm_->wait_allreduce({error.empty() ? 1.0 : 0.0}, Reduce::kMin)[0];
  if (ok == 0.0)
    throw Error(error.empty() ? str("kvstore: worker 0 could not ", what, " (see its message)")
                              : error);
}

void DistKVStore::set_optimizer(std::unique_ptr<optim::Optimizer> optimizer) {
  if (!optimizer) throw InputError("kvstore set_optimizer: no optimizer given");
  from_worker0(MsgType::kSetOptimizer, serialize_optimizer(*optimizer),
               "set the servers' optimizer");
}

void DistKVStore::set_gradient_compression(const CompressionSpec& spec) {
  validate(spec);
  if (spec.enabled() && options_.gradient_dtype != DType::kFloat32)
    throw InputError(str("2-bit gradient compression and gradients pushed as ",
                         dtype_name(options_.gradient_dtype), " do not combine; choose one"));
  if (spec.enabled())
    for (const auto& [k, kv] : keys_)
      if (kv.dtype != DType::kFloat32)
        throw InputError(str("2-bit gradient compression needs float32 values; key ", k, " is ",
                             dtype_name(kv.dtype)));
  compression_ = spec;
  for (auto& [k, kv] : keys_) prepare_compression(kv);
}

void DistKVStore::prepare_compression(Key& kv) const {
  if (is_narrow(narrow_encoding(options_.gradient_dtype)) && kv.codes.is_none()) {
    kv.codes = NDArray(kv.shape, Context::cpu(), options_.gradient_dtype);
    return;
  }
  if (!compression_.enabled() || !kv.residual.is_none()) return;
  kv.residual = NDArray::zeros(kv.shape, Context::cpu(), DType::kFloat32);
  int64_t words = 0;
  kv.code_offsets.clear();
  for (const auto& part : kv.parts) {
    kv.code_offsets.push_back(words);
    words += compressed_words(part.count);
  }
  kv.codes = NDArray(Shape{words}, Context::cpu(), DType::kInt32);  // 32-bit words of codes
}

void DistKVStore::save_optimizer_states(const std::string& path) {
  if (rank() != 0) return;
  // After this worker's pushes: in dist_sync each completes only once its
  // round is updated, so the states are those of a step boundary.
  wait_for_keys();
  to_all_servers(MsgType::kSaveStates, path);
}

void DistKVStore::load_optimizer_states(const std::string& path) {
  from_worker0(MsgType::kLoadStates, path, "load the servers' optimizer states");
}

void DistKVStore::wait_for_keys() {
  for (auto& [k, kv] : keys_) Engine::get().wait_for_var(kv.var.get());
}

void DistKVStore::leave_servers() {
  to_all_servers(MsgType::kBye, std::string());
  const RoleMap& roles = comm_->roles();
  for (int s = 0; s < roles.num_servers(); ++s) comm_->forget(roles.server_rank(s));
}

}  // namespace mx::kvstore
