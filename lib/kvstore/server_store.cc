#include "kvstore/server_store.h"

#include <cstring>

#include "base/error.h"
#include "kvstore/gradient_compression.h"
#include "kvstore/optimizer_spec.h"
#include "kvstore/push_encoding.h"

namespace mx::kvstore {
namespace {

size_t value_bytes(const Header& h) {
  return static_cast<size_t>(h.count) * dtype_size(static_cast<DType>(h.dtype));
}

// Bytes a push or init payload must have.
size_t expected_bytes(const Header& h) {
  const PushEncoding e = encoding_of(h.compressed);
  if (e == PushEncoding::kTwoBit)
    return static_cast<size_t>(compressed_words(h.count)) * sizeof(uint32_t);
  if (is_narrow(e)) return static_cast<size_t>(h.count) * 2;
  return value_bytes(h);
}

}  // namespace

ServerStore::ServerStore(int num_workers, bool sync, int server_index, int num_servers)
    : num_workers_(num_workers),
      sync_(sync),
      server_index_(server_index),
      num_servers_(num_servers) {
  MX_CHECK(num_workers > 0);
}

std::string ServerStore::states_path(const std::string& path) const {
  return str(path, ".server", server_index_, "of", num_servers_);
}

void* ServerStore::payload_buffer(const Header& h, int worker) {
  if (h.type != MsgType::kInit && h.type != MsgType::kPush)
    throw Error(str("kvstore server: unexpected data payload with a ", msg_type_name(h.type)));
  if (worker < 0 || worker >= num_workers_ || h.count < 0 ||
      static_cast<size_t>(h.bytes) != expected_bytes(h))
    throw Error(str("kvstore server: malformed ", msg_type_name(h.type), " of key ", h.key,
                    " from worker ", worker, " (", h.bytes, " bytes for ", h.count, " values)"));
  std::lock_guard lock(mutex_);
  Part& part = parts_[PartId{h.key, h.offset}];
  if (part.recv.empty()) {
    part.recv.resize(static_cast<size_t>(num_workers_));
    part.pushed.assign(static_cast<size_t>(num_workers_), 0);
  }
  auto& buffer = part.recv[static_cast<size_t>(worker)];
  if (static_cast<int64_t>(buffer.bytes()) != h.bytes)
    buffer = NDArray(Shape{h.bytes}, Context::cpu(), DType::kUint8);
  return buffer.raw_data();
}

ServerStore::Part* ServerStore::find(PartId id) {
  std::lock_guard lock(mutex_);
  auto it = parts_.find(id);
  return it == parts_.end() ? nullptr : &it->second;
}

NDArray ServerStore::value(PartId id) const {
  std::lock_guard lock(mutex_);
  auto it = parts_.find(id);
  return it == parts_.end() || !it->second.initialized ? NDArray() : it->second.stored;
}

Response ServerStore::reply(const Request& r) const {
  Response out;
  out.worker = r.worker;
  out.header = r.header;
  out.header.type = MsgType::kReply;
  out.header.bytes = 0;
  out.header.compressed = 0;
  out.packed = r.packed;
  return out;
}

Response ServerStore::error(const Request& r, const std::string& message) const {
  Response out = reply(r);
  out.header.type = MsgType::kError;
  out.text = str("server ", server_index_, ": ", message);
  out.header.bytes = static_cast<int64_t>(out.text.size());
  return out;
}

void ServerStore::handle(Request r, std::vector<Response>& out) {
  const Header& h = r.header;
  const PartId id{h.key, h.offset};
  switch (h.type) {
    case MsgType::kInit: {
      Part* part = find(id);
      MX_CHECK(part != nullptr, "init payload without a buffer");
      if (h.compressed) {
        out.push_back(error(r, str("key ", h.key, ": the initial value cannot be compressed")));
        return;
      }
      const auto dtype = static_cast<DType>(h.dtype);
      if (!part->initialized || part->count != h.count || part->dtype != dtype) {
        part->stored = NDArray(Shape{h.count}, Context::cpu(), dtype);
        part->merged = NDArray(Shape{h.count}, Context::cpu(), dtype);
        part->count = h.count;
        part->dtype = dtype;
      }
      part->stored.wait_to_read();
      std::memcpy(part->stored.raw_data(), part->recv[static_cast<size_t>(r.worker)].raw_data(),
                  value_bytes(h));
      part->initialized = true;
      out.push_back(reply(r));
      return;
    }
    case MsgType::kPush: {
      Part* part = find(id);
      MX_CHECK(part != nullptr, "push payload without a buffer");
      if (!part->initialized || part->count != h.count ||
          part->dtype != static_cast<DType>(h.dtype)) {
        out.push_back(error(r, str("key ", h.key, " (elements ", h.offset, "..", h.offset + h.count,
                                   ") was not initialized with this shape")));
        return;
      }
      if (part->sending > 0) {
        part->waiting.push_back(std::move(r));
        return;
      }
      handle_push(*part, r, out);
      return;
    }
    case MsgType::kPull: {
      Part* part = find(id);
      if (part == nullptr || !part->initialized || part->count != h.count) {
        out.push_back(error(r, str("pull of key ", h.key, " (elements ", h.offset, "..",
                                   h.offset + h.count, "), which was not initialized")));
        return;
      }
      Response resp = reply(r);
      resp.header.dtype = static_cast<int32_t>(part->dtype);
      resp.header.bytes = static_cast<int64_t>(part->stored.bytes());
      resp.data = part->stored.raw_data();
      resp.reads_part = true;
      resp.reading = id;
      ++part->sending;
      out.push_back(std::move(resp));
      return;
    }
    case MsgType::kSetOptimizer:
      try {
        updater_ = std::make_unique<optim::Updater>(
            deserialize_optimizer(r.text, str("optimizer from worker ", r.worker)));
        out.push_back(reply(r));
      } catch (const Error& e) {
        out.push_back(error(r, e.what()));
      }
      return;
    case MsgType::kSaveStates:
    case MsgType::kLoadStates:
      try {
        if (!updater_) throw Error("no optimizer has been set, so there are no states");
        if (h.type == MsgType::kSaveStates)
          updater_->save_states(states_path(r.text));
        else
          updater_->load_states(states_path(r.text));
        out.push_back(reply(r));
      } catch (const Error& e) {
        out.push_back(error(r, e.what()));
      }
      return;
    case MsgType::kBye:
      ++byes_;
      out.push_back(reply(r));
      return;
    default:
      throw Error(str("kvstore server: unexpected ", msg_type_name(h.type), " message from worker ",
                      r.worker));
  }
}

void ServerStore::decode_into(Part& part, int worker, const Header& h, bool add, void* merged) {
  const NDArray& buffer = part.recv[static_cast<size_t>(worker)];
  if (const PushEncoding e = encoding_of(h.compressed); is_narrow(e)) {
    widen_values(e, buffer.raw_data(), static_cast<float*>(merged), h.count, add);
    return;
  }
  if (h.compressed) {
    const auto* codes = static_cast<const uint32_t*>(buffer.raw_data());
    if (add)
      dequantize_2bit_add(codes, static_cast<float*>(merged), h.count,
                          static_cast<float>(h.threshold));
    else
      dequantize_2bit(codes, static_cast<float*>(merged), h.count, static_cast<float>(h.threshold));
    return;
  }
  if (!add) {
    std::memcpy(merged, buffer.raw_data(), buffer.bytes());
    return;
  }
  dispatch_dtype(part.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_floating_point_v<T>) {
      auto* out = static_cast<T*>(merged);
      const auto* in = static_cast<const T*>(buffer.raw_data());
      for (int64_t i = 0; i < h.count; ++i) out[i] += in[i];
    }
  });
}

void ServerStore::apply(Part& part, int key, const NDArray& grad) {
  MX_CHECK(updater_ != nullptr);
  (*updater_)(key, grad, part.stored);
  // The update has read `grad` and written the value (and its states) once done.
  part.stored.wait_to_read();
}

NDArray ServerStore::received(Part& part, int worker) const {
  return part.recv[static_cast<size_t>(worker)].view(Shape{part.count}, part.dtype);
}

void ServerStore::handle_push(Part& part, const Request& r, std::vector<Response>& out) {
  const Header& h = r.header;
  if (h.compressed && part.dtype != DType::kFloat32) {
    out.push_back(error(
        r, str("key ", h.key, ": ",
               h.compressed == static_cast<int32_t>(PushEncoding::kTwoBit) ? "2-bit compression"
                                                                           : "a 16-bit push",
               " needs float32 values")));
    return;
  }
  // No engine operation is pending on the part's arrays here: the only ones
  // are the updater's, and apply() waits for them. (Waiting anyway costs two
  // engine thread hand-overs per push, most of a small key's time.)
  if (!sync_) {
    if (!updater_) {
      out.push_back(error(r,
                          "dist_async applies every push with the optimizer, and none was set "
                          "(set_optimizer before pushing)"));
      return;
    }
    if (h.compressed) decode_into(part, r.worker, h, false, part.merged.raw_data());
    apply(part, h.key, h.compressed ? part.merged : received(part, r.worker));
    out.push_back(reply(r));
    return;
  }
  auto& pushed = part.pushed[static_cast<size_t>(r.worker)];
  if (pushed) {
    out.push_back(error(r, str("worker ", r.worker, " pushed key ", h.key, " twice in one round")));
    return;
  }
  pushed = 1;
  ++part.num_pushed;
  part.held.push_back(h);  // the push itself: how to decode it, and what to echo
  part.held_workers.push_back(r.worker);
  part.held_packed.push_back(r.packed ? 1 : 0);
  if (part.num_pushed < num_workers_) return;

  // The round is complete: sum in worker order, update, release the replies.
  std::vector<const Header*> by_worker(static_cast<size_t>(num_workers_), nullptr);
  for (size_t i = 0; i < part.held.size(); ++i)
    by_worker[static_cast<size_t>(part.held_workers[i])] = &part.held[i];
  // One uncompressed push is its own sum: no copy.
  const bool single = num_workers_ == 1 && !h.compressed;
  NDArray sum = single ? received(part, 0) : part.merged;
  if (!single)
    for (int w = 0; w < num_workers_; ++w)
      decode_into(part, w, *by_worker[static_cast<size_t>(w)], w > 0, part.merged.raw_data());
  if (updater_) {
    apply(part, h.key, sum);
  } else if (single) {
    // Without an updater the sum becomes the value: exchange the buffers.
    std::lock_guard lock(mutex_);
    NDArray old = part.stored;
    part.stored = sum;
    part.recv[0] = old.view(Shape{static_cast<int64_t>(old.bytes())}, DType::kUint8);
  } else {
    std::swap(part.stored, part.merged);
  }
  for (size_t i = 0; i < part.held.size(); ++i) {
    Response resp;
    resp.worker = part.held_workers[i];
    resp.header = part.held[i];
    resp.header.type = MsgType::kReply;
    resp.header.bytes = 0;
    resp.header.compressed = 0;
    resp.packed = part.held_packed[i] != 0;
    out.push_back(std::move(resp));
  }
  part.held.clear();
  part.held_workers.clear();
  part.held_packed.clear();
  part.pushed.assign(part.pushed.size(), 0);
  part.num_pushed = 0;
}

void ServerStore::sent(PartId id, std::vector<Response>& out) {
  Part* part = find(id);
  MX_CHECK(part != nullptr && part->sending > 0);
  if (--part->sending > 0) return;
  while (!part->waiting.empty() && part->sending == 0) {
    Request r = std::move(part->waiting.front());
    part->waiting.pop_front();
    handle_push(*part, r, out);
  }
}

}  // namespace mx::kvstore
