// How a rank judges a quiet or vanished peer (kvstore/peer_liveness.h): a
// pid is looked at only in the same process space, so a peer on another
// machine or in another PID namespace with the same host name is never
// reported dead, only unreachable after the heartbeat time-out.
#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

#include "kvstore/peer_liveness.h"

using namespace mx::kvstore;

namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

PeerObservation seen(bool visible, ProcessState state, double silent_s) {
  PeerObservation peer;
  peer.pid = 4242;
  peer.visible = visible;
  peer.state = state;
  peer.silent_s = silent_s;
  return peer;
}

}  // namespace

TEST_CASE("a peer's pid counts only under the same boot and PID namespace") {
  const ProcessSpace here = this_process_space();
  CHECK(here.boot_id.size() == 36);  // a UUID
  CHECK(here.pid_ns != 0);
  CHECK(same_process_space(here, here));
  ProcessSpace other_machine = here;
  other_machine.boot_id = "00000000-0000-0000-0000-000000000000";
  CHECK_FALSE(same_process_space(here, other_machine));
  ProcessSpace other_container = here;
  other_container.pid_ns += 1;
  CHECK_FALSE(same_process_space(here, other_container));
  CHECK_FALSE(same_process_space(other_container, here));  // either order
  // Unknown on either side (no /proc): never the same.
  CHECK_FALSE(same_process_space(ProcessSpace{}, ProcessSpace{}));
  ProcessSpace no_ns = here;
  no_ns.pid_ns = 0;
  CHECK_FALSE(same_process_space(no_ns, no_ns));
}

TEST_CASE("process states: running, stopped, a zombie and a reaped child have ended") {
  CHECK(process_state(getpid()) == ProcessState::kRunning);
  const pid_t child = fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    pause();
    _exit(0);
  }
  kill(child, SIGSTOP);
  int status = 0;
  REQUIRE(waitpid(child, &status, WUNTRACED) == child);
  CHECK(process_state(child) == ProcessState::kStopped);
  kill(child, SIGKILL);
  // Killed but not reaped: a zombie, which has ended.
  for (int i = 0; i < 1000 && process_state(child) != ProcessState::kEnded; ++i) usleep(1000);
  CHECK(process_state(child) == ProcessState::kEnded);
  REQUIRE(waitpid(child, &status, 0) == child);
  CHECK(process_state(child) == ProcessState::kEnded);
  CHECK(process_state(0) == ProcessState::kUnknown);
}

TEST_CASE("a /proc/PID/stat line: the state after the last ')', unknown when cut short") {
  CHECK(stat_line_state("1234 (mx-train) S 1 1234 1234 0 -1") == ProcessState::kRunning);
  CHECK(stat_line_state("1234 (mx-train) R 1") == ProcessState::kRunning);
  CHECK(stat_line_state("7 (a) b) T 1") == ProcessState::kStopped);  // ')' in the command name
  CHECK(stat_line_state("7 (gdb) t 1") == ProcessState::kStopped);
  CHECK(stat_line_state("7 (x) Z 1") == ProcessState::kEnded);
  CHECK(stat_line_state("7 (x) X") == ProcessState::kEnded);
  CHECK(stat_line_state("7 (x) x") == ProcessState::kEnded);
  // Cut before the state: unknown, never a guess.
  CHECK(stat_line_state("7 (x) ") == ProcessState::kUnknown);
  CHECK(stat_line_state("7 (x)") == ProcessState::kUnknown);
  CHECK(stat_line_state("7 (mx-tr") == ProcessState::kUnknown);
  CHECK(stat_line_state("") == ProcessState::kUnknown);
}

TEST_CASE("verdicts: dead only when seen dead, otherwise stopped, hung or unreachable") {
  const double timeout = 10;
  // A visible process that ended while it was still talking: it died.
  CHECK(peer_failure(seen(true, ProcessState::kEnded, 0.4), timeout) ==
        "has died (process 4242 ended)");
  // ... after half a time-out of silence: it was cut off (or hung) first,
  // and its own side gave up on this one.
  const std::string cut = peer_failure(seen(true, ProcessState::kEnded, 9), timeout);
  CHECK(contains(cut, "has not been heard from for 9 s and its process 4242 has ended since"));
  CHECK(contains(cut, "unreachable"));
  CHECK_FALSE(contains(cut, "died"));
  // Within the time-out nothing else is wrong.
  CHECK(peer_failure(seen(true, ProcessState::kRunning, 9.9), timeout).empty());
  CHECK(peer_failure(seen(true, ProcessState::kStopped, 5), timeout).empty());
  CHECK(peer_failure(seen(false, ProcessState::kUnknown, 9.9), timeout).empty());
  // Past it, what the process's state says.
  CHECK(peer_failure(seen(true, ProcessState::kStopped, 11), timeout) ==
        "has not been heard from for 11 s (heartbeat time-out 10 s): its process 4242 is "
        "stopped (SIGSTOP, Ctrl-Z or a debugger)");
  CHECK(peer_failure(seen(true, ProcessState::kRunning, 11), timeout) ==
        "has not been heard from for 11 s (heartbeat time-out 10 s) although its process 4242 "
        "is running: it is hung or unreachable");
  CHECK(peer_failure(seen(false, ProcessState::kUnknown, 11), timeout) ==
        "has not been heard from for 11 s (heartbeat time-out 10 s): it is stopped, hung or "
        "unreachable");
}

TEST_CASE("a peer in another process space is judged by heartbeats alone") {
  // Same host name, other machine or container: its pid may name no
  // process here (or another one). Whatever the lookup would say, it is
  // not looked at, and only silence ends the job.
  for (ProcessState state : {ProcessState::kEnded, ProcessState::kStopped, ProcessState::kRunning,
                             ProcessState::kUnknown}) {
    CAPTURE(static_cast<int>(state));
    CHECK(peer_failure(seen(false, state, 0.5), 10).empty());
    const std::string late = peer_failure(seen(false, state, 12), 10);
    CHECK(contains(late, "stopped, hung or unreachable"));
    CHECK_FALSE(contains(late, "died"));
  }
}
