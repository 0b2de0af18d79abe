// What a parameter server does with requests, without the transport (so it
// is tested without MPI). The server holds parts of keys (1-D arrays; a key
// below the big-array bound is one part).
//
// dist_sync: a push is kept (its reply held back) until every worker has
// pushed the part this round; then the pushes are summed in worker order
// (reproducible), the updater runs once (or the sum becomes the value when
// there is no updater) and all held replies are released. dist_async: each
// push is applied when it arrives, which needs an updater. Pulls are answered
// at once with the stored value; a worker orders its pull after its push, so
// in sync mode it sees the round's update. A part's value is not updated
// while a reply is still reading it: pushes wait for those sends.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "kvstore/message.h"
#include "ndarray/ndarray.h"
#include "optim/optimizer.h"

namespace mx::kvstore {

// One request from worker `worker` (its index among the workers).
struct Request {
  Header header;
  int worker = 0;
  std::string text;     // control payload (optimizer, path)
  bool packed = false;  // came in a packed message: the reply goes in one too
};

// What to send to worker `worker`. `data` (header.bytes of it) points into
// the stored value of `reading` when that is set: call ServerStore::sent
// once the send has finished.
struct Response {
  int worker = 0;
  Header header;
  const void* data = nullptr;
  std::string text;
  bool reads_part = false;
  PartId reading;
  bool packed = false;  // answers a packed request (packing.h)
};

class ServerStore {
 public:
  ServerStore(int num_workers, bool sync, int server_index, int num_servers);

  // Where the data payload of `h` from `worker` is received (init and push;
  // one buffer per part and worker, reused). Thread-safe: the transport
  // calls it from its own thread. Throws Error for a payload of another type.
  void* payload_buffer(const Header& h, int worker);

  // Handles a request whose payload has arrived; appends what to send now.
  void handle(Request request, std::vector<Response>& out);
  // A response that read `part`'s value has been sent.
  void sent(PartId part, std::vector<Response>& out);

  // Every worker has said bye.
  bool done() const { return byes_ == num_workers_; }
  bool sync() const { return sync_; }
  // The stored value of a part (for tests); none when it does not exist.
  NDArray value(PartId part) const;
  // The file a server writes its optimizer states to, for `path`.
  std::string states_path(const std::string& path) const;

 private:
  struct Part {
    NDArray stored;
    NDArray merged;
    DType dtype = DType::kFloat32;
    int64_t count = 0;
    bool initialized = false;
    std::vector<NDArray> recv;  // per worker: bytes of the latest push
    std::vector<char> pushed;   // per worker, this round
    std::vector<Header> held;   // this round's pushes, replies held back
    std::vector<int> held_workers;
    std::vector<char> held_packed;
    int num_pushed = 0;
    int sending = 0;
    std::deque<Request> waiting;  // pushes waiting for sends of the value
  };

  void handle_push(Part& part, const Request& r, std::vector<Response>& out);
  // sum = the decoded push of `worker` (add: += instead of =).
  void decode_into(Part& part, int worker, const Header& h, bool add, void* sum);
  void apply(Part& part, int key, const NDArray& grad);
  // The latest uncompressed push of `worker` as values (a view of its buffer).
  NDArray received(Part& part, int worker) const;
  Response reply(const Request& r) const;
  Response error(const Request& r, const std::string& message) const;
  Part* find(PartId id);

  const int num_workers_;
  const bool sync_;
  const int server_index_, num_servers_;
  mutable std::mutex mutex_;  // guards parts_ (the map, not the values)
  std::map<PartId, Part> parts_;
  std::unique_ptr<optim::Updater> updater_;
  int byes_ = 0;
};

}  // namespace mx::kvstore
