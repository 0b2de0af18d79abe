// The training loop end to end on synthetic data: run directory, metrics
// log, checkpoints and their pruning, exact resume, and the checks on the
// data that stop a run with a clear message.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "temp_dir.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/trainer.h"
#include "viz/run_history.h"

using namespace mx;
using namespace mx::train;
namespace fs = std::filesystem;

namespace {

// Scratch space under the build tree, removed when the test ends.
struct TempDir : mx::test::TempDir {
  TempDir() : mx::test::TempDir("trainer") {}
  std::string sub(const std::string& name) const { return file(name); }
};

// A small MLP with dropout (random per epoch) on 6 synthetic batches of 8.
const char* kConfig = R"(
network:
  layers:
    - {op: Flatten, name: flat}
    - {op: FullyConnected, name: fc1, num_hidden: 16}
    - {op: Activation, name: relu1, act_type: relu}
    - {op: Dropout, name: drop1, p: 0.3}
    - {op: FullyConnected, name: fc2, num_hidden: 4}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [2, 3], num_batches: 6, num_classes: 4}
  val: {type: synthetic, data_shape: [2, 3], num_batches: 2, num_classes: 4, seed: 7}
optimizer: {type: sgd, learning_rate: 0.1, momentum: 0.9}
train: {batch_size: 8, seed: 5, log_interval: 100}
)";

Config config(std::vector<std::string> overrides) {
  return Config::from_string(kConfig, "test.yaml", overrides);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

void run_training(const Config& c, TrainOptions options) {
  Trainer trainer(c, std::move(options));
  trainer.train();
  CHECK_FALSE(trainer.interrupted());
}

}  // namespace

TEST_CASE("a run writes its config, one metrics line per epoch and the newest checkpoints") {
  TempDir dir;
  const std::string run = dir.sub("run");
  run_training(config({"train.epochs=3", "train.keep_checkpoints=2"}), {"test", "", run, false});
  CHECK(fs::exists(run + "/config.yaml"));
  CHECK(fs::exists(run + "/train.log"));
  const auto metrics = lines(run + "/metrics.jsonl");
  REQUIRE(metrics.size() == 3);
  CHECK(metrics[2].find("\"epoch\":3") != std::string::npos);
  CHECK(metrics[2].find("\"val\":{\"accuracy\"") != std::string::npos);
  CHECK(list_checkpoints(run + "/model") == std::vector<int>{2, 3});
  CHECK(fs::exists(run + "/model-0003.states"));
  CHECK(fs::exists(run + "/model-0003.json"));
  CHECK_FALSE(fs::exists(run + "/intervals.jsonl"));  // log_interval 100: no interval ended
}

TEST_CASE("a run records each log interval's training metrics at its place in the epoch") {
  TempDir dir;
  const std::string run = dir.sub("run");
  run_training(config({"train.epochs=2", "train.log_interval=2"}), {"test", "", run, false});
  const auto records = lines(run + "/intervals.jsonl");
  REQUIRE(records.size() == 6);  // 6 batches an epoch, every 2
  CHECK(records[0].find("\"epoch\":1,") != std::string::npos);
  CHECK(records[0].find("\"batch\":2,") != std::string::npos);
  CHECK(records[5].find("\"train\":{\"accuracy\"") != std::string::npos);
  CHECK(lines(run + "/metrics.jsonl").size() == 2);  // still one line per epoch
  const viz::RunHistory history = viz::read_run_history(run);
  REQUIRE(history.intervals.positions.size() == 6);
  CHECK(history.intervals.positions[0] == doctest::Approx(1.0 / 3));
  CHECK(history.intervals.positions[3] == doctest::Approx(4.0 / 3));
  CHECK(history.intervals.positions[5] == doctest::Approx(2));
  CHECK(history.intervals.log_interval == 2);
  // The running accuracy at the epoch's end is the epoch's training accuracy.
  CHECK(history.intervals.series.at("train.accuracy")[5] ==
        doctest::Approx(history.series.at("train.accuracy")[1]));
}

TEST_CASE("resuming from a checkpoint ends with the uninterrupted run's parameters") {
  TempDir dir;
  const std::string whole = dir.sub("whole"), split = dir.sub("split");
  run_training(config({"train.epochs=2"}), {"test", "", whole, false});
  run_training(config({"train.epochs=1"}), {"test", "", split, false});
  run_training(config({"train.epochs=2"}), {"test", split, "", false});
  const std::string a = read(whole + "/model-0002.params"), b = read(split + "/model-0002.params");
  CHECK(!a.empty());
  CHECK(a == b);
  // The resumed run appends to the log of the run it continues.
  CHECK(lines(split + "/metrics.jsonl").size() == 2);
  CHECK(read(split + "/train.log").find("resumed from") != std::string::npos);
}

TEST_CASE("labels outside the network's classes stop the run before it trains") {
  TempDir dir;
  Config c = config({"data.train.num_classes=9"});
  try {
    run_training(c, {"test", "", dir.sub("run"), false});
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("labels do not fit the output") != std::string::npos);
    CHECK(std::string(e.what()).find("4 classes") != std::string::npos);
  }
}

TEST_CASE("validation batches of another shape are an input error") {
  TempDir dir;
  Config c = config({"data.val.batch_size=4"});
  CHECK_THROWS_WITH_AS(run_training(c, {"test", "", dir.sub("run"), false}),
                       doctest::Contains("validation batches"), InputError);
}

TEST_CASE("a diverging run names the first layer whose output is not finite") {
  TempDir dir;
  Config c = config({"optimizer.learning_rate=1e30", "train.epochs=3"});
  try {
    run_training(c, {"test", "", dir.sub("run"), false});
    FAIL("expected an Error");
  } catch (const Error& e) {
    const std::string what = e.what();
    CHECK(what.find("NaN or infinite in epoch") != std::string::npos);
    CHECK(what.find("first non-finite output: ") != std::string::npos);
  }
}

TEST_CASE("pruning a checkpoint removes the servers' optimizer states next to it") {
  TempDir dir;
  const std::string prefix = dir.sub("model");
  for (const char* epoch : {"0001", "0002"})
    for (const char* suffix : {".params", ".json", ".states.server0of2", ".states.server0of2.json",
                               ".states.server1of2", ".states.server1of2.json"})
      std::ofstream(prefix + "-" + epoch + suffix) << "x";
  std::ofstream(dir.sub("other-0001.states.server0of2")) << "x";  // another prefix: kept
  prune_checkpoints(prefix, 1);
  CHECK(list_checkpoints(prefix) == std::vector<int>{2});
  CHECK_FALSE(fs::exists(prefix + "-0001.states.server0of2"));
  CHECK_FALSE(fs::exists(prefix + "-0001.states.server1of2.json"));
  CHECK(fs::exists(prefix + "-0002.states.server0of2"));
  CHECK(fs::exists(prefix + "-0002.states.server1of2.json"));
  CHECK(fs::exists(dir.sub("other-0001.states.server0of2")));
}
