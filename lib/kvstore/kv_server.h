// A parameter server process (mx-serve-ps): the start-up exchange, then
// requests from the workers are handled by a ServerStore on this thread
// until every worker has said bye. Fatal errors end the whole job.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "kvstore/communicator.h"
#include "kvstore/server_store.h"

namespace mx::kvstore {

class Server {
 public:
  // Joins the job as a server; throws StartupError (exit code 2) when the
  // ranks cannot run together.
  Server();
  ~Server();

  const RoleMap& roles() const { return comm_->roles(); }
  // Serves until every worker has said bye, then finalizes MPI.
  void run();

 private:
  struct Event {
    bool sent = false;  // a reply that read `part` has gone
    PartId part;
    Request request;
  };
  void post(Event event);
  void send(std::vector<Response>& responses);

  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<ServerStore> store_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
};

}  // namespace mx::kvstore
