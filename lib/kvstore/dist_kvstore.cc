#include "kvstore/dist_kvstore.h"

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

}  // namespace

DistKVStore::DistKVStore(std::shared_ptr<Communicator> comm, const DistOptions& options)
    : options_(options), comm_(std::move(comm)) {
  if (options.type != "dist_sync" && options.type != "dist_async")
    throw InputError("kvstore '" + options.type + "' is not a dist store (dist_sync, dist_async)");
  if (options.bigarray_bound < 1)
    throw InputError(str("kvstore big-array bound must be >= 1, not ", options.bigarray_bound));
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

void* DistKVStore::payload_buffer(const Header& h, int source) {
  std::lock_guard lock(mutex_);
  auto it = pending_.find(h.id);
  if (h.type != MsgType::kReply || it == pending_.end() || it->second->base == nullptr ||
      static_cast<size_t>(h.bytes) != static_cast<size_t>(h.count) * it->second->element_bytes)
    throw Error(str("kvstore worker: unexpected data (", h.bytes, " bytes for request ", h.id,
                    ", key ", h.key, ")"));
  (void)source;
  return it->second->base + static_cast<size_t>(h.offset) * it->second->element_bytes;
}

void DistKVStore::on_message(const Header& h, int source, std::string text) {
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

void DistKVStore::send_parts(MsgType type, int k, const Key& key, const std::byte* data, int64_t id,
                             bool compressed) {
  const size_t element_bytes = dtype_size(key.dtype);
  for (size_t i = 0; i < key.parts.size(); ++i) {
    const KeyPart& part = key.parts[i];
    Header h;
    h.type = type;
    h.key = k;
    h.dtype = static_cast<int32_t>(key.dtype);
    h.id = id;
    h.offset = part.offset;
    h.count = part.count;
    h.total = key.shape.size();
    const std::byte* payload = nullptr;
    if (type == MsgType::kInit || type == MsgType::kPush) {
      if (compressed) {
        h.compressed = 1;
        h.threshold = compression_.threshold;
        h.bytes = compressed_words(part.count) * static_cast<int64_t>(sizeof(uint32_t));
        payload = data + static_cast<size_t>(key.code_offsets[i]) * sizeof(uint32_t);
      } else {
        h.bytes = part.count * static_cast<int64_t>(element_bytes);
        payload = data + static_cast<size_t>(part.offset) * element_bytes;
      }
    }
    // A request with data completes when its sends have finished too, so
    // the caller may reuse the array only once MPI is done with it.
    std::function<void()> on_sent;
    if (payload) on_sent = [this, id] { count_down(id, std::string()); };
    comm_->send(comm_->roles().server_rank(part.server), h, payload, std::string(),
                std::move(on_sent));
  }
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
    prepare_compression(key);
    keys_.emplace(keys[i], std::move(key));
  }
  if (rank() == 0) {
    std::vector<NDArray> sources;
    int replies = 0;
    for (size_t i = 0; i < keys.size(); ++i) {
      sources.push_back(values[i].ctx().is_gpu() ? values[i].copy_to(Context::cpu()) : values[i]);
      sources.back().wait_to_read();
      replies += 2 * static_cast<int>(keys_.at(keys[i]).parts.size());  // replies and sends
    }
    wait_for([&](auto done) {
      const int64_t id = expect(replies, nullptr, 0, std::move(done));
      for (size_t i = 0; i < keys.size(); ++i)
        send_parts(MsgType::kInit, keys[i], keys_.at(keys[i]),
                   static_cast<const std::byte*>(sources[i].raw_data()), id, false);
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
    const bool compressed = compression_.enabled();
    if (compressed) {
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
    }
    Engine::get().push_async(
        [this, k, &kv, source, compressed](RunContext, OnComplete on_complete) {
          // Each part: the server's reply and the end of the send.
          const int64_t id = expect(2 * static_cast<int>(kv.parts.size()), nullptr, 0,
                                    [on_complete](std::exception_ptr e) { on_complete(e); });
          send_parts(MsgType::kPush, k, kv, static_cast<const std::byte*>(source.raw_data()), id,
                     compressed);
        },
        Context::cpu(), {source.var()}, {kv.var.get()}, FnProperty::kCopy, priority,
        str("kvstore_push(", k, ")"));
  }
}

void DistKVStore::pull(const std::vector<int>& keys,
                       const std::vector<std::vector<NDArray>>& outputs, int priority) {
  if (keys.size() != outputs.size())
    throw InputError(
        str("kvstore pull: ", keys.size(), " keys but ", outputs.size(), " output lists"));
  for (size_t i = 0; i < keys.size(); ++i) {
    const int k = keys[i];
    Key& kv = key(k);
    check_arrays(k, outputs[i], kv.shape, kv.dtype, "output");
    const bool direct = outputs[i].size() == 1 && !outputs[i][0].ctx().is_gpu();
    if (!direct && kv.pulled.is_none()) kv.pulled = NDArray(kv.shape, Context::cpu(), kv.dtype);
    NDArray target = direct ? outputs[i][0] : kv.pulled;
    Engine::get().push_async(
        [this, k, &kv, target](RunContext, OnComplete on_complete) {
          const int64_t id =
              expect(static_cast<int>(kv.parts.size()), static_cast<std::byte*>(target.raw_data()),
                     dtype_size(kv.dtype), [on_complete](std::exception_ptr e) { on_complete(e); });
          send_parts(MsgType::kPull, k, kv, nullptr, id, false);
        },
        Context::cpu(), {}, {target.var(), kv.var.get()}, FnProperty::kCopy, priority,
        str("kvstore_pull(", k, ")"));
    if (!direct)
      for (const auto& out : outputs[i]) push_copy(kv.pulled, out, priority, "kvstore_pull_copy");
  }
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
  if (spec.enabled())
    for (const auto& [k, kv] : keys_)
      if (kv.dtype != DType::kFloat32)
        throw InputError(str("2-bit gradient compression needs float32 values; key ", k, " is ",
                             dtype_name(kv.dtype)));
  compression_ = spec;
  for (auto& [k, kv] : keys_) prepare_compression(kv);
}

void DistKVStore::prepare_compression(Key& kv) const {
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
