#include "kvstore/peer_liveness.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include "base/error.h"

namespace mx::kvstore {

ProcessSpace this_process_space() {
  ProcessSpace space;
  std::ifstream boot("/proc/sys/kernel/random/boot_id");
  std::getline(boot, space.boot_id);
  struct stat ns {};
  if (stat("/proc/self/ns/pid", &ns) == 0) space.pid_ns = static_cast<uint64_t>(ns.st_ino);
  return space;
}

bool same_process_space(const ProcessSpace& a, const ProcessSpace& b) {
  return !a.boot_id.empty() && a.pid_ns != 0 && a.boot_id == b.boot_id && a.pid_ns == b.pid_ns;
}

ProcessState process_state(int64_t pid) {
  if (pid <= 0) return ProcessState::kUnknown;
  std::FILE* f = std::fopen(("/proc/" + std::to_string(pid) + "/stat").c_str(), "r");
  if (f == nullptr) return ProcessState::kEnded;
  char line[512] = {};
  const size_t n = std::fread(line, 1, sizeof(line) - 1, f);
  std::fclose(f);
  return stat_line_state(std::string(line, n));
}

ProcessState stat_line_state(const std::string& line) {
  // "pid (comm) S ...": the state follows the last ')'.
  const size_t close = line.rfind(')');
  if (close == std::string::npos || close + 2 >= line.size()) return ProcessState::kUnknown;
  switch (line[close + 2]) {
    case 'Z':
    case 'X':
    case 'x': return ProcessState::kEnded;
    case 'T':  // stopped by a signal
    case 't':  // stopped by a debugger
      return ProcessState::kStopped;
    default: return ProcessState::kRunning;
  }
}

std::string peer_failure(const PeerObservation& peer, double timeout_s) {
  const int silent = static_cast<int>(peer.silent_s);
  if (peer.visible && peer.state == ProcessState::kEnded) {
    if (peer.silent_s <= timeout_s / 2) return str("has died (process ", peer.pid, " ended)");
    // Both sides of a cut link time out alike; the side that gave up first
    // ended its processes, which the other side then sees gone.
    return str("has not been heard from for ", silent, " s and its process ", peer.pid,
               " has ended since: it was unreachable or hung before it ended");
  }
  if (peer.silent_s <= timeout_s) return "";
  const std::string heard =
      str("has not been heard from for ", silent, " s (heartbeat time-out ", timeout_s, " s)");
  if (peer.visible && peer.state == ProcessState::kStopped)
    return str(heard, ": its process ", peer.pid, " is stopped (SIGSTOP, Ctrl-Z or a debugger)");
  if (peer.visible && peer.state == ProcessState::kRunning)
    return str(heard, " although its process ", peer.pid, " is running: it is hung or unreachable");
  return str(heard, ": it is stopped, hung or unreachable");
}

}  // namespace mx::kvstore
