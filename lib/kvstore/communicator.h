// The MPI side of a distributed run. One thread per process owns every MPI
// call (OpenMPI 4.1 has no asynchronous progress, and this way nothing relies
// on MPI_THREAD_MULTIPLE): other threads queue sends and barriers to it, and
// it reports arrivals and completions through callbacks, which run on it and
// must not block.
//
// Start-up (in the constructor): MPI_Init, then every rank publishes its
// RankInfo, checks the same RoleMap, and rank 0 prints the role table. A
// problem (RoleMap::problem) ends every rank alike: rank 0 prints it, all
// finalize, and the constructor throws StartupError (exit code 2).
//
// Faults: every rank sends a heartbeat to the ranks of the other role each
// interval and watches for any message from them; one that stays silent for
// the time-out (a stopped or hung process, which MPI never detects) ends the
// job with MPI_Abort and a message naming its rank, host and role. A peer
// whose process this rank can see (same kernel and PID namespace,
// peer_liveness.h) is also looked at directly, so its death or a SIGSTOP is
// named as such; a peer elsewhere that dies is noticed by mpirun, which ends
// the job about a second later.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/error.h"
#include "kvstore/message.h"
#include "kvstore/reduce.h"
#include "kvstore/role_map.h"

namespace mx::kvstore {

// A start-up problem; every rank throws it, rank 0 has already printed it.
class StartupError : public ReportedInputError {
 public:
  using ReportedInputError::ReportedInputError;
};

class Communicator {
 public:
  // Where the data payload of a header from `source` goes (called once per
  // such header, in arrival order per source).
  using PayloadFn = std::function<void*(const Header& header, int source)>;
  // A message whose payload has arrived; `text` holds a control payload.
  using MessageFn = std::function<void(const Header& header, int source, std::string text)>;

  // `self`: role and (workers) config hash and settings; rank, host and
  // appnum are filled in here. Initializes MPI unless the program did
  // (then it must have asked for MPI_THREAD_SERIALIZED or more).
  explicit Communicator(const RankInfo& self);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  const RoleMap& roles() const { return roles_; }
  int rank() const { return rank_; }
  const RankInfo& self() const { return roles_.at(rank_); }

  // Starts delivering messages (those that arrived before wait for this).
  void start(PayloadFn payload, MessageFn message);
  // Sends a header and, when header.bytes > 0, the payload: `data` (which
  // must stay valid until on_sent) or else `text`. Thread-safe.
  void send(int dest, const Header& header, const void* data, std::string text,
            std::function<void()> on_sent = {});
  // An MPI barrier over the ranks of this rank's role; `done` runs when all
  // have reached it.
  void barrier(std::function<void()> done);
  // Reduces `n` doubles in place over the ranks of this rank's role; `data`
  // stays valid until `done` runs.
  void allreduce(double* data, int n, Reduce op, std::function<void()> done);
  // The same, blocking until done (from any thread but the communication thread).
  void wait_barrier();
  std::vector<double> wait_allreduce(std::vector<double> values, Reduce op);
  // Stops heartbeats to and from `rank` (it has left in good order).
  void forget(int rank);
  // Prints "error: MESSAGE" and ends the whole job with MPI_Abort.
  [[noreturn]] void abort(const std::string& message, int code = 1);
  // Waits for queued sends, then finalizes MPI (when it initialized it).
  void shutdown();

 private:
  struct Impl;
  void run(RankInfo self);
  void startup(RankInfo self);

  int rank_ = 0;
  RoleMap roles_;
  std::unique_ptr<Impl> impl_;
  std::thread thread_;
};

}  // namespace mx::kvstore
