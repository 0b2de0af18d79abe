#include "train/checkpoint.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "ndarray/params_io.h"

namespace mx::train {
namespace fs = std::filesystem;

std::string CheckpointPaths::params_base() const {
  char number[16];
  std::snprintf(number, sizeof number, "%04d", epoch);
  return prefix + "-" + number;
}

std::string CheckpointPaths::params() const { return params_base() + ".params"; }

void save_checkpoint(const CheckpointPaths& paths, const graph::Symbol& symbol,
                     const std::map<std::string, NDArray>& args,
                     const std::map<std::string, NDArray>& aux, const TrainerState& state) {
  if (!fs::exists(paths.symbol())) symbol.save(paths.symbol());
  NamedArrays list;
  for (const auto& [name, a] : args) {
    list.names.push_back("arg:" + name);
    list.arrays.push_back(a);
  }
  for (const auto& [name, a] : aux) {
    list.names.push_back("aux:" + name);
    list.arrays.push_back(a);
  }
  save_params(paths.params(), list);
  nlohmann::json j{{"epoch", state.epoch},
                   {"batches_done", state.batches_done},
                   {"num_update", state.num_update},
                   {"seed", state.seed}};
  if (state.loss_scale)
    j["loss_scale"] = {{"scale", state.loss_scale->scale},
                       {"good_steps", state.loss_scale->good_steps},
                       {"skipped_steps", state.loss_scale->skipped_steps}};
  const std::string text = j.dump(2) + "\n";
  write_file_atomically(paths.trainer(), [&](std::ostream& out) { out << text; });
}

void load_checkpoint_params(const std::string& params_path,
                            const std::map<std::string, NDArray>& args,
                            const std::map<std::string, NDArray>& aux) {
  NamedArrays list = load_params(params_path);
  if (list.names.empty())
    throw InputError(params_path + ": the arrays have no names; not a checkpoint");
  std::map<std::string, NDArray> by_name;
  for (size_t i = 0; i < list.names.size(); ++i) by_name[list.names[i]] = list.arrays[i];
  std::vector<std::string> problems;
  auto take = [&](const std::map<std::string, NDArray>& targets, const char* prefix) {
    for (const auto& [name, target] : targets) {
      auto it = by_name.find(prefix + name);
      if (it == by_name.end()) {
        problems.push_back(std::string(prefix) + name + " is missing");
        continue;
      }
      if (it->second.shape() != target.shape()) {
        problems.push_back(str(prefix, name, " has shape ", it->second.shape().to_string(),
                               " in the file but ", target.shape().to_string(), " in the network"));
        continue;
      }
      if (it->second.dtype() != target.dtype()) {
        problems.push_back(str(prefix, name, " is ", dtype_name(it->second.dtype()),
                               " in the file but ", dtype_name(target.dtype()), " in the network"));
        continue;
      }
      NDArray dst = target;
      it->second.copy_to(dst);
    }
  };
  take(args, "arg:");
  take(aux, "aux:");
  if (!problems.empty())
    throw InputError(params_path + " does not match the network: " + join(problems, "; "));
}

TrainerState load_trainer_state(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InputError("cannot open '" + path +
                     "': no such file (a checkpoint written by mx-train has one)");
  try {
    nlohmann::json j = nlohmann::json::parse(in);
    TrainerState s;
    s.epoch = j.at("epoch").get<int>();
    s.batches_done = j.value("batches_done", 0);
    s.num_update = j.value("num_update", int64_t{0});
    s.seed = j.value("seed", uint64_t{0});
    if (j.contains("loss_scale")) {
      const auto& ls = j.at("loss_scale");
      s.loss_scale =
          LossScaleState{ls.at("scale").get<double>(), ls.at("good_steps").get<int64_t>(),
                         ls.at("skipped_steps").get<int64_t>()};
    }
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw InputError(path + ": not a trainer state: " + e.what());
  }
}

std::vector<int> list_checkpoints(const std::string& prefix) {
  std::vector<int> epochs;
  const fs::path p(prefix);
  const fs::path dir = p.parent_path().empty() ? fs::path(".") : p.parent_path();
  if (!fs::is_directory(dir)) return epochs;
  const std::regex pattern(
      std::regex_replace(p.filename().string(), std::regex(R"([.^$|()\[\]{}*+?\\])"), R"(\$&)") +
      R"(-(\d{4,})\.params)");
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::smatch m;
    const std::string name = entry.path().filename().string();
    if (std::regex_match(name, m, pattern)) epochs.push_back(std::stoi(m[1].str()));
  }
  std::sort(epochs.begin(), epochs.end());
  return epochs;
}

CheckpointPaths find_checkpoint(const std::string& resume, const std::string& default_prefix_name) {
  if (fs::is_directory(resume)) {
    const std::string prefix = (fs::path(resume) / default_prefix_name).string();
    auto epochs = list_checkpoints(prefix);
    if (epochs.empty())
      throw InputError("'" + resume + "': no checkpoint " + default_prefix_name +
                       "-NNNN.params in it");
    return {prefix, epochs.back()};
  }
  std::string path = resume;
  if (path.size() > 7 && path.compare(path.size() - 7, 7, ".params") == 0)
    path = path.substr(0, path.size() - 7);
  std::smatch m;
  if (!std::regex_match(path, m, std::regex(R"((.*)-(\d{4,}))")))
    throw InputError("--resume " + resume +
                     ": expected a run directory or a checkpoint such as runs/x/model-0003");
  CheckpointPaths paths{m[1].str(), std::stoi(m[2].str())};
  if (!fs::exists(paths.params()))
    throw InputError("'" + resume + "': " + paths.params() + " does not exist");
  return paths;
}

void prune_checkpoints(const std::string& prefix, int keep) {
  if (keep <= 0) return;
  auto epochs = list_checkpoints(prefix);
  for (size_t i = 0; i + static_cast<size_t>(keep) < epochs.size(); ++i) {
    CheckpointPaths p{prefix, epochs[i]};
    std::error_code ignored;
    for (const auto& f : {p.params(), p.states(), p.states() + ".json", p.trainer()})
      fs::remove(f, ignored);
    // A distributed run's servers' optimizer states, PATH.server<i>of<S>[.json]
    // (next to the checkpoint: one machine or a shared file system).
    const fs::path states(p.states());
    const std::string servers = states.filename().string() + ".server";
    const fs::path dir = states.has_parent_path() ? states.parent_path() : fs::path(".");
    for (const auto& entry : fs::directory_iterator(dir, ignored)) {
      const std::string name = entry.path().filename().string();
      if (name.compare(0, servers.size(), servers) == 0) fs::remove(entry.path(), ignored);
    }
  }
}

}  // namespace mx::train
