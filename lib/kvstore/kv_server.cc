#include "kvstore/kv_server.h"

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

void Server::send(std::vector<Response>& responses) {
  const RoleMap& roles = comm_->roles();
  for (auto& r : responses) {
    std::function<void()> on_sent;
    if (r.reads_part) on_sent = [this, part = r.reading] { post(Event{true, part, {}}); };
    const int dest = roles.worker_rank(r.worker);
    comm_->send(dest, r.header, r.data, std::move(r.text), std::move(on_sent));
  }
  responses.clear();
}

void Server::run() {
  const RoleMap& roles = comm_->roles();
  comm_->start(
      [this, &roles](const Header& h, int source) {
        return store_->payload_buffer(h, roles.at(source).index);
      },
      [this, &roles](const Header& h, int source, std::string text) {
        if (roles.at(source).role != Role::kWorker)
          comm_->abort(str("kvstore server: a ", msg_type_name(h.type), " message from ",
                           roles.describe(source), ", which is not a worker"));
        Event e;
        e.request.header = h;
        e.request.worker = roles.at(source).index;
        e.request.text = std::move(text);
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
