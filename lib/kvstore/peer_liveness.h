// How a rank judges a peer that has gone quiet or away. A process id means
// something only where the peer's process can really be seen: under the
// same kernel (boot id) and in the same PID namespace. Host names prove
// nothing: containers on several machines, or network namespaces of one
// machine, may share one. There a vanished process is reported at once as
// dead (and a stopped one as stopped); anywhere else only heartbeats tell,
// and the message says the peer is stopped, hung or unreachable.
#pragma once

#include <cstdint>
#include <string>

namespace mx::kvstore {

// Where a process id is meaningful.
struct ProcessSpace {
  std::string boot_id;  // /proc/sys/kernel/random/boot_id; "" when unknown
  uint64_t pid_ns = 0;  // inode of /proc/self/ns/pid; 0 when unknown
};

// This process's space, read from /proc.
ProcessSpace this_process_space();
// True only when both are known and equal: a peer's pid then names its
// process here.
bool same_process_space(const ProcessSpace& a, const ProcessSpace& b);

enum class ProcessState { kRunning, kStopped, kEnded, kUnknown };
// The state of process `pid` of this process space (/proc/PID/stat): gone
// or a zombie is kEnded, SIGSTOP or a debugger kStopped.
ProcessState process_state(int64_t pid);
// The state in a /proc/PID/stat line; kUnknown for a line cut before it.
ProcessState stat_line_state(const std::string& line);

// What a rank knows about one peer at a heartbeat check.
struct PeerObservation {
  int64_t pid = 0;
  bool visible = false;                         // same_process_space(mine, the peer's)
  ProcessState state = ProcessState::kUnknown;  // meaningful only when visible
  double silent_s = 0;                          // since its last message
};

// Why the job must end because of this peer ("has died (process 4242
// ended)"), or "" when the peer is fine. `timeout_s`: the heartbeat
// time-out; a peer whose process ended after it had already been silent
// for half of it was cut off or hung first (its own side gave up on us).
std::string peer_failure(const PeerObservation& peer, double timeout_s);

}  // namespace mx::kvstore
