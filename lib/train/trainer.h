// The training loop behind mx-train: builds the network, the data, the
// optimizer and the metrics from a config, trains for the configured epochs
// with validation, writes a run directory (resolved config, metrics.jsonl,
// log, checkpoints) and resumes exactly from a checkpoint. It changes no
// process-wide setting: mx-train applies train/process_threads.h's
// training_threads (engine workers, oneDNN threads) before building it.
#pragma once

#include <iosfwd>
#include <memory>
#include <string>

#include "train/config.h"
#include "train/train_settings.h"

namespace mx::train {

class Trainer {
 public:
  Trainer(Config config, TrainOptions options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains to the configured number of epochs (or until interrupted).
  void train();
  bool interrupted() const;
  const std::string& run_dir() const;

  // The network table, totals and memory report (--dry-run, --json).
  void describe(std::ostream& out, bool json) const;
  // Forward/backward time per layer on synthetic input (--benchmark).
  void benchmark(std::ostream& out, int iterations) const;

 private:
  struct State;
  std::unique_ptr<State> s_;
};

// Ctrl-C (SIGINT), SIGTERM and SIGUSR1 ask the trainer to checkpoint and
// stop after the current batch (every worker of a distributed run after the
// same one); a second signal ends the program at once.
void install_interrupt_handler();
bool interrupt_requested();

}  // namespace mx::train
