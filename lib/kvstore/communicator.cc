#include "kvstore/communicator.h"

#include <mpi.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <future>
#include <iostream>
#include <list>
#include <map>
#include <set>
#include <vector>

#include "kvstore/peer_liveness.h"

namespace mx::kvstore {
namespace {

using Clock = std::chrono::steady_clock;

// How long the communication thread keeps polling (yielding the core in
// between) after its last message or task, before it sleeps between polls.
constexpr auto kPollAfterProgress = std::chrono::milliseconds(1);

// What each rank publishes at start-up (fixed size, sent as bytes).
struct WireInfo {
  int32_t role;
  int32_t appnum;
  int32_t sync;
  int32_t protocol;  // kProtocolVersion (was padding, 0, before versions were exchanged)
  int64_t pid;
  uint64_t config_hash;
  double heartbeat_interval_s;
  double heartbeat_timeout_s;
  uint64_t pid_ns;
  char host[64];
  char boot_id[48];
};

bool is_control(MsgType type) {
  return type == MsgType::kSetOptimizer || type == MsgType::kSaveStates ||
         type == MsgType::kLoadStates || type == MsgType::kError;
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(code, text, &len);
  return std::string(text, static_cast<size_t>(len));
}

}  // namespace

struct Communicator::Impl {
  // --- shared with other threads (under mutex) ---
  std::mutex mutex;
  std::condition_variable wake;
  std::deque<std::function<void()>> tasks;

  // --- owned by the communication thread ---
  bool initialized_mpi = false;
  MPI_Comm role_comm = MPI_COMM_NULL;
  PayloadFn payload_fn;
  MessageFn message_fn;
  bool started = false;
  bool stopping = false;
  std::deque<std::pair<Header, int>> early;  // headers that came before start()

  struct Active {
    std::function<void()> done;
    int peer = -1;  // for error messages
    bool transfer = false;
  };
  std::vector<MPI_Request> requests;
  std::vector<Active> actives;

  struct Outgoing {
    Header header;
    std::string text;
    std::function<void()> on_sent;
    int remaining = 0;
  };
  std::list<Outgoing> outgoing;

  Header incoming{};
  MPI_Request header_request = MPI_REQUEST_NULL;

  std::set<int> peers;  // ranks we send heartbeats to and watch
  std::map<int, Clock::time_point> last_heard;
  Clock::time_point next_heartbeat;
  Clock::time_point last_loop = Clock::now();
  Header heartbeat{};
  double interval_s = 1.0, timeout_s = 10.0;

  // The steps of the communication thread's loop (Communicator::run), each
  // given the communicator for its roles and its abort.
  [[noreturn]] void fail(Communicator& c, const std::string& what, int peer, int code);
  void add(MPI_Request req, Active active);
  void post_header(Communicator& c);
  void dispatch(Communicator& c, const Header& h, int source);
  bool run_tasks();
  bool poll_header(Communicator& c);
  bool poll_transfers(Communicator& c);
  void heartbeats(Communicator& c);
  void wait_for_work(Clock::time_point last_progress);
  void shut_down();

  std::vector<int> done_indices;  // poll_transfers' buffers, kept between calls
  std::vector<MPI_Status> statuses;
};

Communicator::Communicator(const RankInfo& self) : impl_(std::make_unique<Impl>()) {
  std::promise<void> started;
  auto ready = started.get_future();
  thread_ = std::thread([this, self, p = std::move(started)]() mutable {
    try {
      startup(self);
    } catch (...) {
      p.set_exception(std::current_exception());
      return;
    }
    p.set_value();
    run(self);
  });
  try {
    ready.get();
  } catch (...) {
    thread_.join();
    throw;
  }
}

Communicator::~Communicator() { shutdown(); }

void Communicator::startup(RankInfo self) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    // This thread makes every MPI call, so it is MPI's "main" thread.
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    impl_->initialized_mpi = true;
  } else {
    int provided = 0;
    MPI_Query_thread(&provided);
    if (provided < MPI_THREAD_SERIALIZED)
      throw Error(
          "kvstore: MPI was initialized without MPI_THREAD_SERIALIZED support, which the "
          "communication thread needs");
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int* appnum = nullptr;
  int has_appnum = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &has_appnum);

  WireInfo mine{};
  mine.role = static_cast<int32_t>(self.role);
  mine.appnum = has_appnum && appnum ? *appnum : 0;
  mine.sync = self.sync ? 1 : 0;
  mine.protocol = kProtocolVersion;
  mine.pid = static_cast<int64_t>(getpid());
  mine.config_hash = self.config_hash;
  mine.heartbeat_interval_s = self.heartbeat_interval_s;
  mine.heartbeat_timeout_s = self.heartbeat_timeout_s;
  char host[MPI_MAX_PROCESSOR_NAME] = {};
  int host_len = 0;
  MPI_Get_processor_name(host, &host_len);
  std::memcpy(mine.host, host, std::min(sizeof(mine.host) - 1, static_cast<size_t>(host_len)));
  const ProcessSpace space = this_process_space();
  mine.pid_ns = space.pid_ns;
  std::memcpy(mine.boot_id, space.boot_id.data(),
              std::min(sizeof(mine.boot_id) - 1, space.boot_id.size()));

  std::vector<WireInfo> all(static_cast<size_t>(size));
  MPI_Allgather(&mine, sizeof(WireInfo), MPI_BYTE, all.data(), sizeof(WireInfo), MPI_BYTE,
                MPI_COMM_WORLD);
  std::vector<RankInfo> ranks;
  for (int r = 0; r < size; ++r) {
    const WireInfo& w = all[static_cast<size_t>(r)];
    RankInfo info;
    info.rank = r;
    info.appnum = w.appnum;
    info.role = static_cast<Role>(w.role);
    info.host = std::string(w.host, strnlen(w.host, sizeof(w.host)));
    info.pid = w.pid;
    info.space.boot_id = std::string(w.boot_id, strnlen(w.boot_id, sizeof(w.boot_id)));
    info.space.pid_ns = w.pid_ns;
    info.config_hash = w.config_hash;
    info.sync = w.sync != 0;
    info.protocol = w.protocol;
    info.heartbeat_interval_s = w.heartbeat_interval_s;
    info.heartbeat_timeout_s = w.heartbeat_timeout_s;
    ranks.push_back(info);
  }
  roles_ = RoleMap(std::move(ranks));
  const std::string problem = roles_.problem();
  if (rank_ == 0) {
    std::cout << roles_.table() << std::flush;
    if (!problem.empty()) std::cerr << "error: " << problem << std::endl;
  }
  if (!problem.empty()) {
    if (impl_->initialized_mpi) MPI_Finalize();
    throw StartupError(problem);
  }
  MPI_Comm_split(MPI_COMM_WORLD, static_cast<int>(self.role), rank_, &impl_->role_comm);

  const RankInfo& settings = roles_.settings();
  impl_->interval_s = settings.heartbeat_interval_s;
  impl_->timeout_s = settings.heartbeat_timeout_s;
  for (const auto& r : roles_.ranks())
    if (r.role != self.role) impl_->peers.insert(r.rank);
  const auto now = Clock::now();
  for (int p : impl_->peers) impl_->last_heard[p] = now;
  impl_->next_heartbeat = now;
  impl_->heartbeat.type = MsgType::kHeartbeat;
}

void Communicator::Impl::fail(Communicator& c, const std::string& what, int peer, int code) {
  c.abort(str("kvstore: MPI ", what, peer >= 0 ? " with " + c.roles_.describe(peer) : "",
              " failed at ", c.roles_.describe(c.rank_), ": ", mpi_error_text(code)),
          1);
}

void Communicator::Impl::add(MPI_Request req, Active active) {
  requests.push_back(req);
  actives.push_back(std::move(active));
}

void Communicator::Impl::post_header(Communicator& c) {
  MPI_Request req;
  int rc = MPI_Irecv(&incoming, sizeof(Header), MPI_BYTE, MPI_ANY_SOURCE, kHeaderTag,
                     MPI_COMM_WORLD, &req);
  if (rc != MPI_SUCCESS) fail(c, "receive", -1, rc);
  header_request = req;
}

// A header has arrived: receive its payload (if any), then hand both on.
void Communicator::Impl::dispatch(Communicator& c, const Header& h, int source) {
  if (h.bytes == 0) {
    message_fn(h, source, std::string());
    return;
  }
  if (h.bytes > INT_MAX) c.abort(str("kvstore: a payload of ", h.bytes, " bytes is too big"), 1);
  const int bytes = static_cast<int>(h.bytes);
  MPI_Request req;
  if (is_control(h.type)) {
    auto text = std::make_shared<std::string>(static_cast<size_t>(bytes), '\0');
    int rc = MPI_Irecv(text->data(), bytes, MPI_BYTE, source, kPayloadTag, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) fail(c, "receive", source, rc);
    add(req, {[this, h, source, text] { message_fn(h, source, std::move(*text)); }, source, true});
    return;
  }
  void* buffer = nullptr;
  try {
    buffer = payload_fn(h, source);
  } catch (const std::exception& e) {
    c.abort(str(e.what(), " (from ", c.roles_.describe(source), ")"), 1);
  }
  int rc = MPI_Irecv(buffer, bytes, MPI_BYTE, source, kPayloadTag, MPI_COMM_WORLD, &req);
  if (rc != MPI_SUCCESS) fail(c, "receive", source, rc);
  add(req, {[this, h, source] { message_fn(h, source, std::string()); }, source, true});
}

// Queued work from other threads; true when there was some.
bool Communicator::Impl::run_tasks() {
  std::deque<std::function<void()>> queued;
  {
    std::lock_guard lock(mutex);
    queued.swap(tasks);
  }
  for (auto& task : queued) task();
  return !queued.empty();
}

// An arrived header (tested on its own: it is re-posted at once).
bool Communicator::Impl::poll_header(Communicator& c) {
  if (header_request == MPI_REQUEST_NULL) return false;
  int flag = 0;
  MPI_Status status;
  int rc = MPI_Test(&header_request, &flag, &status);
  if (rc != MPI_SUCCESS) fail(c, "receive", -1, rc);
  if (!flag) return false;
  const Header h = incoming;
  const int source = status.MPI_SOURCE;
  post_header(c);
  last_heard[source] = Clock::now();
  if (h.type != MsgType::kHeartbeat) {
    if (started)
      dispatch(c, h, source);
    else
      early.emplace_back(h, source);
  }
  return true;
}

// Sends, payload receives, barriers: the completed ones run their callbacks.
bool Communicator::Impl::poll_transfers(Communicator& c) {
  if (requests.empty()) return false;
  int count = 0;
  done_indices.resize(requests.size());
  statuses.resize(requests.size());
  int rc = MPI_Testsome(static_cast<int>(requests.size()), requests.data(), &count,
                        done_indices.data(), statuses.data());
  if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) fail(c, "transfer", -1, rc);
  if (count <= 0 || count == MPI_UNDEFINED) return false;
  std::vector<std::function<void()>> callbacks;
  for (int i = 0; i < count; ++i) {
    const auto k = static_cast<size_t>(done_indices[static_cast<size_t>(i)]);
    const MPI_Status& status = statuses[static_cast<size_t>(i)];
    // A header is received from any source: its status names the sender.
    if (rc == MPI_ERR_IN_STATUS && status.MPI_ERROR != MPI_SUCCESS)
      fail(c, "transfer", actives[k].peer >= 0 ? actives[k].peer : status.MPI_SOURCE,
           status.MPI_ERROR);
    callbacks.push_back(std::move(actives[k].done));
  }
  size_t kept = 0;
  for (size_t k = 0; k < requests.size(); ++k) {
    if (requests[k] == MPI_REQUEST_NULL) continue;
    requests[kept] = requests[k];
    actives[kept] = std::move(actives[k]);
    ++kept;
  }
  requests.resize(kept);
  actives.resize(kept);
  for (auto& cb : callbacks)
    if (cb) cb();
  return true;
}

// Heartbeats out, silence in. A process that was itself stopped (and
// resumed) has heard nothing meanwhile through no fault of its peers.
void Communicator::Impl::heartbeats(Communicator& c) {
  const auto now = Clock::now();
  if (std::chrono::duration<double>(now - last_loop).count() > timeout_s / 2)
    for (auto& [peer, heard] : last_heard) heard = now;
  last_loop = now;
  if (stopping || now < next_heartbeat) return;
  for (int p : peers) {
    MPI_Request req;
    int rc = MPI_Isend(&heartbeat, sizeof(Header), MPI_BYTE, p, kHeaderTag, MPI_COMM_WORLD, &req);
    if (rc != MPI_SUCCESS) fail(c, "heartbeat", p, rc);
    add(req, {{}, p, false});
  }
  next_heartbeat =
      now + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(interval_s));
  const ProcessSpace& my_space = c.roles_.at(c.rank_).space;
  for (int p : peers) {
    // A peer whose process this rank can see is checked directly (a
    // death is seen at once; mpirun would end the job about a second
    // later naming only rank and host); any other only by its silence.
    const RankInfo& info = c.roles_.at(p);
    PeerObservation peer;
    peer.pid = info.pid;
    peer.visible = info.pid > 0 && same_process_space(my_space, info.space);
    if (peer.visible) peer.state = process_state(info.pid);
    peer.silent_s = std::chrono::duration<double>(now - last_heard[p]).count();
    const std::string failure = peer_failure(peer, timeout_s);
    if (!failure.empty())
      c.abort(str("kvstore: ", c.roles_.describe(p), " ", failure, "; ending the job"), 1);
  }
}

// MPI advances transfers only inside MPI calls: keep polling while data
// moves, yielding the core to the other processes of an oversubscribed
// node; otherwise sleep until work is queued or a short poll interval.
void Communicator::Impl::wait_for_work(Clock::time_point last_progress) {
  bool transfers = false;
  for (const auto& a : actives) transfers |= a.transfer;
  // Messages come in bursts (a step's pushes and pulls, then the replies):
  // for a while after the last one the next is looked for at once, since
  // a reply noticed only after a sleep costs a small key most of its time.
  if (transfers || Clock::now() - last_progress < kPollAfterProgress) {
    sched_yield();
  } else {
    std::unique_lock lock(mutex);
    wake.wait_for(lock, std::chrono::microseconds(200), [&] { return !tasks.empty(); });
  }
}

// Shut down: no more receives; heartbeats still in flight complete locally.
void Communicator::Impl::shut_down() {
  if (header_request != MPI_REQUEST_NULL) {
    MPI_Cancel(&header_request);
    MPI_Wait(&header_request, MPI_STATUS_IGNORE);
  }
  // Only small sends (heartbeats) can be left; freeing lets them finish
  // in the background, so a peer that has gone already cannot block us.
  for (auto& req : requests)
    if (req != MPI_REQUEST_NULL) MPI_Request_free(&req);
  if (role_comm != MPI_COMM_NULL) MPI_Comm_free(&role_comm);
  if (initialized_mpi) MPI_Finalize();
}

void Communicator::run(RankInfo) {
  Impl& s = *impl_;
  s.post_header(*this);
  auto last_progress = Clock::now();
  while (true) {
    bool progress = s.run_tasks();
    if (s.started && !s.early.empty()) {
      for (const auto& [h, source] : s.early) s.dispatch(*this, h, source);
      s.early.clear();
    }
    if (s.stopping && s.outgoing.empty()) break;
    progress = s.poll_header(*this) || progress;
    progress = s.poll_transfers(*this) || progress;
    s.heartbeats(*this);
    if (progress)
      last_progress = Clock::now();
    else
      s.wait_for_work(last_progress);
  }
  s.shut_down();
}

void Communicator::start(PayloadFn payload, MessageFn message) {
  std::promise<void> done;
  auto ready = done.get_future();
  {
    std::lock_guard lock(impl_->mutex);
    impl_->tasks.push_back(
        [this, payload = std::move(payload), message = std::move(message), &done]() mutable {
          Impl& s = *impl_;
          s.payload_fn = std::move(payload);
          s.message_fn = std::move(message);
          s.started = true;  // the loop delivers what came early, in arrival order
          done.set_value();
        });
  }
  impl_->wake.notify_one();
  ready.get();
}

void Communicator::send(int dest, const Header& header, const void* data, std::string text,
                        std::function<void()> on_sent) {
  if (header.bytes > INT_MAX)
    throw Error(str("kvstore: a message of ", header.bytes,
                    " bytes is more than MPI's 2 GiB per message; lower the big-array bound so "
                    "the key is split over more servers"));
  {
    std::lock_guard lock(impl_->mutex);
    impl_->tasks.push_back([this, dest, header, data, text = std::move(text),
                            on_sent = std::move(on_sent)]() mutable {
      Impl& s = *impl_;
      s.outgoing.push_back({header, std::move(text), std::move(on_sent), 0});
      auto it = std::prev(s.outgoing.end());
      auto finished = [&s, it] {
        if (--it->remaining > 0) return;
        auto cb = std::move(it->on_sent);
        s.outgoing.erase(it);
        if (cb) cb();
      };
      MPI_Request req;
      int rc =
          MPI_Isend(&it->header, sizeof(Header), MPI_BYTE, dest, kHeaderTag, MPI_COMM_WORLD, &req);
      if (rc != MPI_SUCCESS)
        abort(str("kvstore: MPI send to ", roles_.describe(dest), " failed: ", mpi_error_text(rc)));
      it->remaining = 1;
      s.requests.push_back(req);
      s.actives.push_back({finished, dest, false});
      if (header.bytes > 0) {
        const void* payload = data ? data : it->text.data();
        rc = MPI_Isend(payload, static_cast<int>(header.bytes), MPI_BYTE, dest, kPayloadTag,
                       MPI_COMM_WORLD, &req);
        if (rc != MPI_SUCCESS)
          abort(
              str("kvstore: MPI send to ", roles_.describe(dest), " failed: ", mpi_error_text(rc)));
        it->remaining = 2;
        s.requests.push_back(req);
        s.actives.push_back({finished, dest, true});
      }
    });
  }
  impl_->wake.notify_one();
}

void Communicator::barrier(std::function<void()> done) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->tasks.push_back([this, done = std::move(done)]() mutable {
      Impl& s = *impl_;
      MPI_Request req;
      int rc = MPI_Ibarrier(s.role_comm, &req);
      if (rc != MPI_SUCCESS) abort("kvstore: MPI barrier failed: " + mpi_error_text(rc));
      s.requests.push_back(req);
      s.actives.push_back({std::move(done), -1, true});
    });
  }
  impl_->wake.notify_one();
}

void Communicator::allreduce(double* data, int n, Reduce op, std::function<void()> done) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->tasks.push_back([this, data, n, op, done = std::move(done)]() mutable {
      Impl& s = *impl_;
      MPI_Op mpi_op = op == Reduce::kSum ? MPI_SUM : op == Reduce::kMin ? MPI_MIN : MPI_MAX;
      MPI_Request req;
      int rc = MPI_Iallreduce(MPI_IN_PLACE, data, n, MPI_DOUBLE, mpi_op, s.role_comm, &req);
      if (rc != MPI_SUCCESS) abort("kvstore: MPI allreduce failed: " + mpi_error_text(rc));
      s.requests.push_back(req);
      s.actives.push_back({std::move(done), -1, true});
    });
  }
  impl_->wake.notify_one();
}

// The callback owns the promise: set_value may still be running when get() returns.
void Communicator::wait_barrier() {
  auto done = std::make_shared<std::promise<void>>();
  auto ready = done->get_future();
  barrier([done] { done->set_value(); });
  ready.get();
}

std::vector<double> Communicator::wait_allreduce(std::vector<double> values, Reduce op) {
  auto done = std::make_shared<std::promise<void>>();
  auto ready = done->get_future();
  allreduce(values.data(), static_cast<int>(values.size()), op, [done] { done->set_value(); });
  ready.get();
  return values;
}

void Communicator::forget(int rank) {
  {
    std::lock_guard lock(impl_->mutex);
    impl_->tasks.push_back([this, rank] {
      impl_->peers.erase(rank);
      impl_->last_heard.erase(rank);
    });
  }
  impl_->wake.notify_one();
}

void Communicator::abort(const std::string& message, int code) {
  static std::atomic<bool> aborting{false};
  if (!aborting.exchange(true)) {
    std::cerr << "error: " << message << std::endl;
    if (std::this_thread::get_id() == thread_.get_id() || !thread_.joinable()) {
      MPI_Abort(MPI_COMM_WORLD, code);
    } else {
      std::lock_guard lock(impl_->mutex);
      impl_->tasks.push_front([code] { MPI_Abort(MPI_COMM_WORLD, code); });
      impl_->wake.notify_one();
    }
  }
  // If MPI has not ended us by then, exit without finalizing, which mpirun
  // also turns into the end of the job.
  std::this_thread::sleep_for(std::chrono::seconds(10));
  std::_Exit(code);
}

void Communicator::shutdown() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard lock(impl_->mutex);
    impl_->tasks.push_back([this] { impl_->stopping = true; });
  }
  impl_->wake.notify_one();
  thread_.join();
}

}  // namespace mx::kvstore
