#include "kvstore/role_map.h"

#include <iomanip>
#include <map>
#include <sstream>

#include "base/error.h"

namespace mx::kvstore {

const char* role_name(Role role) { return role == Role::kServer ? "server" : "worker"; }

RoleMap::RoleMap(std::vector<RankInfo> ranks) : ranks_(std::move(ranks)) {
  for (auto& r : ranks_) {
    auto& list = r.role == Role::kServer ? servers_ : workers_;
    r.index = static_cast<int>(list.size());
    list.push_back(r.rank);
  }
}

std::string RoleMap::problem() const {
  const std::string usage =
      "start servers and workers with one mpirun, e.g. "
      "mpirun -np 1 mx-serve-ps : -np 2 mx-train CONFIG kvstore=dist_sync";
  if (workers_.empty()) return "mx-serve-ps was started without workers; " + usage;
  if (servers_.empty())
    return str("a dist kvstore needs servers but all ", ranks_.size(), " ranks are workers; ",
               usage);
  std::map<int, Role> app_role;
  for (const auto& r : ranks_) {
    auto [it, added] = app_role.emplace(r.appnum, r.role);
    if (!added && it->second != r.role)
      return str("application ", r.appnum,
                 " of the mpirun command line has both servers and "
                 "workers; give each program its own -np");
  }
  for (const auto& r : ranks_)
    if (r.protocol != ranks_[0].protocol)
      return str("the ranks run mx builds that speak different kvstore protocols: ", describe(0),
                 " speaks version ", ranks_[0].protocol, ", ", describe(r.rank), " version ",
                 r.protocol, "; start every rank from the same build");
  const RankInfo& first = settings();
  for (int w : workers_) {
    const RankInfo& r = at(w);
    if (r.config_hash != first.config_hash)
      return str("the workers' resolved configs differ: ", describe(first.rank), " has hash ",
                 std::hex, first.config_hash, ", ", describe(r.rank), " has ", r.config_hash,
                 std::dec, "; start every worker with the same config and overrides");
    if (r.sync != first.sync || r.heartbeat_interval_s != first.heartbeat_interval_s ||
        r.heartbeat_timeout_s != first.heartbeat_timeout_s)
      return str("the workers' kvstore settings differ (", describe(first.rank), " and ",
                 describe(r.rank), "); start every worker with the same settings");
  }
  return "";
}

std::string RoleMap::describe(int rank) const {
  if (rank < 0 || rank >= static_cast<int>(ranks_.size())) return str("rank ", rank);
  const RankInfo& r = at(rank);
  return str("rank ", rank, " (host ", r.host, ", ", role_name(r.role), " ", r.index, ")");
}

std::string RoleMap::table() const {
  std::ostringstream os;
  os << "kvstore: " << num_servers() << " server(s), " << num_workers() << " worker(s)";
  // The workers' liveness settings, which every rank uses: how soon a lost peer ends the job.
  if (!workers_.empty())
    os << ", " << (settings().sync ? "dist_sync" : "dist_async") << ", heartbeats every "
       << settings().heartbeat_interval_s << " s, a peer silent for "
       << settings().heartbeat_timeout_s << " s is lost";
  os << "\n  rank  host                  pid       role    index  app\n";
  for (const auto& r : ranks_)
    os << "  " << std::left << std::setw(6) << r.rank << std::setw(22) << r.host << std::setw(10)
       << r.pid << std::setw(8) << role_name(r.role) << std::setw(7) << r.index << r.appnum << "\n";
  return os.str();
}

}  // namespace mx::kvstore
