// A parameter server process (mx-serve-ps): the start-up exchange, then
// requests from the workers are handled by a ServerStore on this thread
// until every worker has said bye. Fatal errors end the whole job.
// A packed message (packing.h) is handled entry by entry as if each had
// come alone; the replies to its entries that are ready go back to each
// worker in one packed message, their values copied at once.
#pragma once

#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "kvstore/communicator.h"
#include "kvstore/packing.h"
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
    PackBytes pack;  // a packed request's payload
  };
  void post(Event event);
  void* payload_buffer(const Header& h, int source);
  // Hands each entry of a packed request to the store.
  void handle_packed(const Request& request, const PackBytes& pack,
                     std::vector<Response>& responses);
  void send(std::vector<Response>& responses);
  void send_pack(int worker, PackWriter& pack);

  std::unique_ptr<Communicator> comm_;
  std::unique_ptr<ServerStore> store_;
  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
  // Packed requests being received, by (worker rank, message id); only the
  // communication thread's callbacks touch it.
  std::map<std::pair<int, int64_t>, PackBytes> packs_in_;
  int64_t next_pack_id_ = 1;
};

}  // namespace mx::kvstore
