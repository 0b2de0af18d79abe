#include "train/run_dir.h"

#include <ctime>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "base/file_util.h"
#include "train/interval_record.h"

namespace mx::train {
namespace fs = std::filesystem;

namespace {

std::string now_stamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

}  // namespace

RunDir RunDir::open(const Config& config, const TrainOptions& options,
                    const std::string& prefix_name, bool writes) {
  RunDir run;
  run.writes_ = writes;
  if (!options.resume.empty()) {
    try {
      run.resume_from_ = find_checkpoint(options.resume, prefix_name);
    } catch (const InputError& e) {
      // A run stopped before its first checkpoint still has its config:
      // say how to start it again in the same directory.
      const fs::path saved = fs::path(options.resume) / "config.yaml";
      std::error_code ec;
      if (fs::is_directory(options.resume, ec) && fs::exists(saved, ec))
        throw InputError(std::string("--resume ") + e.what() +
                         "; the run stopped before its first checkpoint. Start it again with: "
                         "mx-train " +
                         saved.string() + " --run-dir " + options.resume);
      throw InputError(std::string("--resume ") + e.what());
    }
    run.path_ = fs::path(run.resume_from_->prefix).parent_path().string();
    if (run.path_.empty()) run.path_ = ".";
  } else if (!options.run_dir.empty()) {
    run.path_ = options.run_dir;
  } else {
    run.path_ = config.get_string(
        "train.run_dir", (fs::path("runs") / (options.config_name + "-" + now_stamp())).string());
  }
  run.prefix_ = (fs::path(run.path_) / prefix_name).string();
  if (!writes) return run;
  fs::create_directories(run.path_);
  if (!run.resume_from_) {
    const std::string config_text = config.to_yaml();
    write_file_atomically((fs::path(run.path_) / "config.yaml").string(),
                          [&](std::ostream& o) { o << config_text; });
  }
  run.log_.open((fs::path(run.path_) / "train.log").string(), std::ios::app);
  return run;
}

void RunDir::say(const std::string& line) {
  if (!writes_) return;
  std::cout << line << std::endl;
  if (log_) log_ << line << std::endl;
}

void RunDir::append_metrics(const std::string& json_line) const {
  if (!writes_) return;
  std::ofstream jsonl((fs::path(path_) / "metrics.jsonl").string(), std::ios::app);
  jsonl << json_line << "\n";
}

void RunDir::append_interval(const std::string& json_line) const {
  if (!writes_) return;
  std::ofstream jsonl((fs::path(path_) / kIntervalsFile).string(), std::ios::app);
  jsonl << json_line << "\n";
}

}  // namespace mx::train
