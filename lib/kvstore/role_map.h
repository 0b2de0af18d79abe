// Who is who in a distributed run. Every rank states its role (the program
// it runs: mx-serve-ps ranks are servers, mx-train ranks workers), its MPMD
// application number, host, and — for workers — the hash of the resolved
// config and the kvstore settings. The start-up exchange gives every rank
// the same table, so every rank reaches the same verdict on it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kvstore/peer_liveness.h"

namespace mx::kvstore {

enum class Role : int32_t { kServer = 0, kWorker = 1 };
const char* role_name(Role role);

struct RankInfo {
  int rank = 0;
  int appnum = 0;  // MPI_APPNUM: which program of the mpirun command line
  Role role = Role::kWorker;
  int index = 0;  // among the ranks of its role, by rank
  std::string host;
  int64_t pid = 0;
  ProcessSpace space;  // where `pid` means this process (peer_liveness.h)
  // The messages this build speaks (message.h's kProtocolVersion); builds
  // from before versions were exchanged send 0.
  int protocol = 0;
  // Workers only (servers take theirs from the workers):
  uint64_t config_hash = 0;
  bool sync = true;  // dist_sync (true) or dist_async
  double heartbeat_interval_s = 1.0;
  double heartbeat_timeout_s = 10.0;
};

class RoleMap {
 public:
  RoleMap() = default;
  // `ranks` ordered by rank; fills in the indices.
  explicit RoleMap(std::vector<RankInfo> ranks);

  const std::vector<RankInfo>& ranks() const { return ranks_; }
  const RankInfo& at(int rank) const { return ranks_.at(static_cast<size_t>(rank)); }
  int num_workers() const { return static_cast<int>(workers_.size()); }
  int num_servers() const { return static_cast<int>(servers_.size()); }
  int worker_rank(int index) const { return workers_.at(static_cast<size_t>(index)); }
  int server_rank(int index) const { return servers_.at(static_cast<size_t>(index)); }

  // Why this set of ranks cannot run, or "" when it can: servers without
  // workers, workers without servers, ranks of builds that speak different
  // protocols, workers whose configs or kvstore settings differ, an
  // application mixing roles.
  std::string problem() const;
  // "rank 2 (host h, worker 1)"
  std::string describe(int rank) const;
  // The table rank 0 prints at start-up.
  std::string table() const;
  // The settings the run uses: worker 0's (all workers agree, see problem()).
  const RankInfo& settings() const { return ranks_.at(static_cast<size_t>(workers_.at(0))); }

 private:
  std::vector<RankInfo> ranks_;
  std::vector<int> workers_, servers_;
};

}  // namespace mx::kvstore
