#include "kvstore/kv_server.h"

#include <algorithm>
#include <cstring>
#include <exception>

namespace mx::kvstore {

Server::Server() {
  RankInfo self;
  self.role = Role::kServer;
  comm_ = std::make_unique<Communicator>(self);
  const RoleMap& roles = comm_->roles();
  store_ = std::make_unique<ServerStore>(roles.num_workers(), roles.settings().sync,
                                         comm_->self().index, roles.num_servers());
}

Server::~Server() = default;

void Server::post(Event event) {
  {
    std::lock_guard lock(mutex_);
    events_.push_back(std::move(event));
  }
  ready_.notify_one();
}

void* Server::payload_buffer(const Header& h, int source) {
  if (h.type != MsgType::kPacked) return store_->payload_buffer(h, roles().at(source).index);
  PackBytes& buffer = packs_in_[{source, h.id}] = receive_buffer(h);
  return buffer.data.get();
}

void Server::handle_packed(const Request& request, const PackBytes& pack,
                           std::vector<Response>& responses) {
  const int worker = request.worker;
  for (const PackedEntry& e : unpack(request.header, pack.data.get())) {
    const MsgType type = e.header.type;
    if (type != MsgType::kInit && type != MsgType::kPush && type != MsgType::kPull)
      throw Error(str("a packed ", msg_type_name(type), " request from worker ", worker,
                      " (only init, push and pull travel packed)"));
    if (type != MsgType::kPull)
      std::memcpy(store_->payload_buffer(e.header, worker), e.data,
                  static_cast<size_t>(e.header.bytes));
    Request r;
    r.header = e.header;
    r.worker = worker;
    r.packed = true;
    store_->handle(std::move(r), responses);
  }
}

void Server::send_pack(int worker, PackWriter& pack) {
  const Header h = pack.header(next_pack_id_++);
  auto bytes = std::make_shared<PackBytes>(pack.take());
  comm_->send(roles().worker_rank(worker), h, bytes->data.get(), std::string(), [bytes] {});
}

void Server::send(std::vector<Response>& responses) {
  const RoleMap& roles = comm_->roles();
  std::map<int, PackWriter> packs;  // by worker
  std::map<int, int64_t> bytes;
  for (const Response& r : responses)
    if (r.packed) bytes[r.worker] += packed_entry_bytes(r.header.bytes);
  for (const auto& [worker, n] : bytes) packs[worker].reserve(std::min(n, kMaxPackBytes));
  // By index: a packed reply's value is copied at once, and the store may
  // then release pushes that waited for it, whose replies are appended.
  for (size_t i = 0; i < responses.size(); ++i) {
    Response r = std::move(responses[i]);
    if (r.packed) {
      PackWriter& pack = packs[r.worker];
      if (pack.size() + packed_entry_bytes(r.header.bytes) > kMaxPackBytes && !pack.empty())
        send_pack(r.worker, pack);
      pack.add(r.header, r.data != nullptr ? r.data : r.text.data());
      if (r.reads_part) store_->sent(r.reading, responses);
      continue;
    }
    std::function<void()> on_sent;
    if (r.reads_part) on_sent = [this, part = r.reading] { post(Event{true, part, {}, {}}); };
    const int dest = roles.worker_rank(r.worker);
    comm_->send(dest, r.header, r.data, std::move(r.text), std::move(on_sent));
  }
  responses.clear();
  for (auto& [worker, pack] : packs)
    if (!pack.empty()) send_pack(worker, pack);
}

void Server::run() {
  const RoleMap& roles = comm_->roles();
  comm_->start([this](const Header& h, int source) { return payload_buffer(h, source); },
               [this, &roles](const Header& h, int source, std::string text) {
                 if (roles.at(source).role != Role::kWorker)
                   comm_->abort(str("kvstore server: a ", msg_type_name(h.type), " message from ",
                                    roles.describe(source), ", which is not a worker"));
                 Event e;
                 e.request.header = h;
                 e.request.worker = roles.at(source).index;
                 e.request.text = std::move(text);
                 if (h.type == MsgType::kPacked) {
                   auto it = packs_in_.find({source, h.id});
                   if (it == packs_in_.end())
                     comm_->abort(str("kvstore server: packed message ", h.id, " from ",
                                      roles.describe(source), " came without its payload"));
                   e.pack = std::move(it->second);
                   packs_in_.erase(it);
                 }
                 post(std::move(e));
               });
  std::vector<Response> responses;
  while (!store_->done()) {
    Event event;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [&] { return !events_.empty(); });
      event = std::move(events_.front());
      events_.pop_front();
    }
    try {
      if (event.sent) {
        store_->sent(event.part, responses);
      } else {
        const bool bye = event.request.header.type == MsgType::kBye;
        const int worker = event.request.worker;
        if (event.request.header.type == MsgType::kPacked)
          handle_packed(event.request, event.pack, responses);
        else
          store_->handle(std::move(event.request), responses);
        // A worker that has left is no longer watched.
        if (bye) comm_->forget(roles.worker_rank(worker));
      }
      send(responses);
    } catch (const std::exception& e) {
      comm_->abort(
          str("kvstore server ", comm_->self().index, " (rank ", comm_->rank(), "): ", e.what()));
    }
  }
  comm_->shutdown();
}

}  // namespace mx::kvstore
