// Ctrl-C during training: a checkpoint of the position within the epoch,
// and a resumed run that ends where an uninterrupted one does. The interrupt
// flag is process state, so the interrupted run is a child process (forked
// before this process starts the engine's threads: keep this file's one
// test case alone in its executable).
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "temp_dir.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/trainer.h"

using namespace mx;
using namespace mx::train;
namespace fs = std::filesystem;

namespace {

// No dropout: a run resumed mid-epoch draws other random numbers.
const char* kConfig = R"(
network:
  layers:
    - {op: Flatten, name: flat}
    - {op: FullyConnected, name: fc1, num_hidden: 16}
    - {op: Activation, name: relu1, act_type: relu}
    - {op: FullyConnected, name: fc2, num_hidden: 4}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [2, 3], num_batches: 5, num_classes: 4}
optimizer: {type: sgd, learning_rate: 0.1, momentum: 0.9}
train: {batch_size: 8, seed: 5, epochs: 2}
)";

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("an interrupted run checkpoints its place in the epoch and resumes from it exactly") {
  const mx::test::TempDir dir("interrupt");  // the child ends with _Exit: only we remove it
  const std::string split = dir.file("split"), whole = dir.file("whole");
  const Config config = Config::from_string(kConfig, "test.yaml");

  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    install_interrupt_handler();
    std::raise(SIGINT);  // as if Ctrl-C came during the first batch
    try {
      Trainer trainer(config, {"test", "", split, false});
      trainer.train();
      std::_Exit(trainer.interrupted() ? 0 : 3);
    } catch (...) {
      std::_Exit(4);
    }
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  CHECK_FALSE(interrupt_requested());

  const TrainerState position = load_trainer_state(split + "/model-0000.json");
  CHECK(position.epoch == 0);
  CHECK(position.batches_done == 1);
  CHECK(fs::exists(split + "/model-0000.states"));

  {
    Trainer resumed(config, {"test", split + "/model-0000", "", false});
    resumed.train();
    CHECK_FALSE(resumed.interrupted());
    Trainer uninterrupted(config, {"test", "", whole, false});
    uninterrupted.train();
  }
  const std::string a = read(whole + "/model-0002.params"), b = read(split + "/model-0002.params");
  CHECK(!a.empty());
  CHECK(a == b);
}
