// mx-train: trains a network described by a YAML config (docs/config.md).
//   mx-train configs/lenet-fashion-mnist.yaml train.epochs=2 optimizer.learning_rate=0.05
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "base/progress_bar.h"
#include "op/listing.h"
#include "program.h"
#include "train/process_threads.h"
#include "train/run_curves.h"
#include "train/trainer.h"

int main(int argc, char** argv) {
  CLI::App app{"Train a network from a YAML config (docs/config.md)", "mx-train"};
  std::string config_path, resume, run_dir, graph, precision;
  std::vector<std::string> overrides;
  bool dry_run = false, json = false, print_config = false, list_operators = false;
  int benchmark = 0;
  app.add_option("config", config_path,
                 "the YAML config (a run directory's config.yaml repeats that run)");
  app.add_option("overrides", overrides,
                 "dotted key=value overrides, e.g. train.epochs=3 optimizer.learning_rate=0.1");
  app.add_option("--resume", resume,
                 "continue from a run directory (its latest checkpoint) or a checkpoint");
  app.add_option("--run-dir", run_dir,
                 "where to write the run (default: train.run_dir or runs/NAME-TIME)");
  app.add_option("--precision", precision,
                 "float32, bfloat16 or float16 (train.precision; docs/config.md)");
  app.add_flag("--dry-run", dry_run, "print the network table, totals and memory plan, then exit");
  app.add_flag("--json", json, "with --dry-run: print JSON");
  app.add_option("--benchmark", benchmark,
                 "time forward and backward per layer over N iterations, then exit")
      ->expected(0, 1)
      ->default_str("10");
  app.add_flag("--print-config", print_config,
               "print the resolved config (includes and overrides applied), then exit");
  app.add_option("--graph", graph,
                 "draw the network to a .svg, .png or .dot file (docs/pictures.md), then exit");
  app.add_flag("--list-operators", list_operators,
               "list the operators a network can use, then exit");

  // 130 after Ctrl-C, returned once the body has ended: the trainer's
  // threads (data pipelines) must be stopped by its destructor before the
  // process's static objects go, which std::exit would not wait for.
  bool interrupted = false;
  const int code = mx::run_program(app, argc, argv, [&] {
    if (list_operators) {
      mx::op::print_operators(std::cout,
                              json ? mx::op::ListingFormat::kJson : mx::op::ListingFormat::kText);
      return;
    }
    if (app.count("--benchmark") && benchmark <= 0) benchmark = 10;
    namespace fs = std::filesystem;
    // `mx-train --resume DIR key=value`: the first word is an override, not a config.
    if (config_path.find('=') != std::string::npos) {
      overrides.insert(overrides.begin(), config_path);
      config_path.clear();
    }
    // A resumed run may give only the run directory: its saved config is the default.
    if (config_path.empty() && !resume.empty()) {
      fs::path dir = fs::is_directory(resume) ? fs::path(resume) : fs::path(resume).parent_path();
      config_path = (dir / "config.yaml").string();
    }
    if (config_path.empty())
      throw mx::InputError("give a config file (see configs/ and docs/config.md)");
    if (!precision.empty()) overrides.push_back("train.precision=" + precision);
    for (const auto& o : overrides)
      if (o.find('=') == std::string::npos)
        throw mx::InputError("'" + o + "' is not a key=value override (one config file per run)");
    mx::train::Config config = mx::train::Config::load(config_path, overrides);
    if (print_config) {
      std::cout << config.to_yaml();
      return;
    }
    if (!graph.empty()) {
      mx::train::draw_config_network(config, fs::path(config_path).filename().string(), graph);
      return;
    }
    mx::train::TrainOptions options;
    options.config_name = fs::path(config_path).stem().string();
    if (options.config_name == "config" && !resume.empty()) options.config_name = "resumed";
    options.resume = resume;
    options.run_dir = run_dir;
    options.progress_bar = mx::live_progress_terminal(STDERR_FILENO);
    options.inspect_only = dry_run || benchmark > 0;
    // The process's thread choice for this run, before anything is built.
    mx::train::apply_process_threads(mx::train::training_threads(config));
    // A distributed start-up problem ends every rank alike (StartupError);
    // rank 0 has printed it.
    mx::train::Trainer trainer(std::move(config), options);
    if (dry_run) {
      trainer.describe(std::cout, json);
      return;
    }
    if (benchmark > 0) {
      trainer.benchmark(std::cout, benchmark);
      return;
    }
    mx::train::install_interrupt_handler();
    trainer.train();
    interrupted = trainer.interrupted();
  });
  return code == 0 && interrupted ? 130 : code;
}
