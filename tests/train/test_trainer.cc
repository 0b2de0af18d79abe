// The training loop end to end on synthetic data: run directory, metrics
// log, checkpoints and their pruning, exact resume, and the checks on the
// data that stop a run with a clear message.
#include <doctest/doctest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

#include "base/error.h"
#include "ndarray/params_io.h"
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

// ---- checkpoint files on their own (lib/train/checkpoint.cc)

namespace {

NDArray floats(const Shape& shape, float first) {
  std::vector<float> v(static_cast<size_t>(shape.size()));
  for (size_t i = 0; i < v.size(); ++i) v[i] = first + static_cast<float>(i);
  return NDArray::from_vector<float>(shape, v);
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a checkpoint is MXNet's params and symbol files plus the trainer's position") {
  TempDir dir;
  const CheckpointPaths paths{dir.sub("model"), 12};
  CHECK(paths.params() == dir.sub("model-0012.params"));
  CHECK(CheckpointPaths{"m", 12345}.params() == "m-12345.params");
  const graph::Symbol first = graph::Symbol::variable("first");
  save_checkpoint(paths, first, {{"w", floats({2, 3}, 1)}, {"b", floats({3}, 10)}},
                  {{"mean", floats({3}, 20)}}, TrainerState{12, 4, 77, 991, std::nullopt});
  NamedArrays saved = load_params(paths.params());
  CHECK(saved.names == std::vector<std::string>{"arg:b", "arg:w", "aux:mean"});
  CHECK(saved.arrays[1].to_vector<float>() == floats({2, 3}, 1).to_vector<float>());
  const TrainerState s = load_trainer_state(paths.trainer());
  CHECK(s.epoch == 12);
  CHECK(s.batches_done == 4);
  CHECK(s.num_update == 77);
  CHECK(s.seed == 991);
  // The symbol is written once: a later checkpoint of the run keeps it.
  const std::string symbol = read(paths.symbol());
  CHECK(symbol.find("\"first\"") != std::string::npos);
  save_checkpoint({paths.prefix, 13}, graph::Symbol::variable("second"), {}, {}, TrainerState{});
  CHECK(read(paths.symbol()) == symbol);

  // Loaded back into the network's arrays, by name.
  std::map<std::string, NDArray> args{{"w", NDArray::zeros({2, 3})}, {"b", NDArray::zeros({3})}};
  std::map<std::string, NDArray> aux{{"mean", NDArray::zeros({3})}};
  load_checkpoint_params(paths.params(), args, aux);
  CHECK(args.at("w").to_vector<float>() == floats({2, 3}, 1).to_vector<float>());
  CHECK(args.at("b").to_vector<float>() == floats({3}, 10).to_vector<float>());
  CHECK(aux.at("mean").to_vector<float>() == floats({3}, 20).to_vector<float>());
}

TEST_CASE("loading a checkpoint names every parameter that is missing or does not fit") {
  TempDir dir;
  const CheckpointPaths paths{dir.sub("model"), 1};
  save_checkpoint(paths, graph::Symbol::variable("x"),
                  {{"a", floats({2, 3}, 0)}, {"c", floats({2}, 0)}, {"d", floats({2}, 5)}},
                  {{"m", floats({4}, 0)}}, TrainerState{});
  std::map<std::string, NDArray> args{{"a", NDArray::zeros({3, 2})},
                                      {"b", NDArray::zeros({2})},
                                      {"c", NDArray::zeros({2}, Context::cpu(), DType::kFloat64)},
                                      {"d", NDArray::zeros({2})}};
  std::map<std::string, NDArray> aux{{"m", NDArray::zeros({4})}, {"v", NDArray::zeros({4})}};
  CHECK(error_of([&] { load_checkpoint_params(paths.params(), args, aux); }) ==
        paths.params() +
            " does not match the network: arg:a has shape (2, 3) in the file but (3, 2) in the "
            "network; arg:b is missing; arg:c is float32 in the file but float64 in the network; "
            "aux:v is missing");
  // The arrays that do not fit are left as they were.
  CHECK(args.at("a").to_vector<float>() == std::vector<float>(6, 0));
  CHECK(args.at("c").to_vector<double>() == std::vector<double>{0, 0});

  NamedArrays unnamed;
  unnamed.arrays.push_back(floats({2}, 0));
  save_params(dir.sub("unnamed.params"), unnamed);
  CHECK(error_of([&] { load_checkpoint_params(dir.sub("unnamed.params"), args, aux); }) ==
        dir.sub("unnamed.params") + ": the arrays have no names; not a checkpoint");
}

TEST_CASE("a trainer state file: older files' defaults and clear errors") {
  TempDir dir;
  std::ofstream(dir.sub("old.json")) << R"({"epoch": 3})";
  const TrainerState s = load_trainer_state(dir.sub("old.json"));
  CHECK(s.epoch == 3);
  CHECK(s.batches_done == 0);
  CHECK(s.num_update == 0);
  CHECK(s.seed == 0);
  CHECK(error_of([&] { load_trainer_state(dir.sub("absent.json")); }) ==
        "cannot open '" + dir.sub("absent.json") +
            "': no such file (a checkpoint written by mx-train has one)");
  std::ofstream(dir.sub("no_epoch.json")) << R"({"batches_done": 3})";
  CHECK(error_of([&] {
          load_trainer_state(dir.sub("no_epoch.json"));
        }).starts_with(dir.sub("no_epoch.json") + ": not a trainer state: "));
  std::ofstream(dir.sub("broken.json")) << "{";
  CHECK(error_of([&] {
          load_trainer_state(dir.sub("broken.json"));
        }).starts_with(dir.sub("broken.json") + ": not a trainer state: "));
}

TEST_CASE("checkpoints are found by their exact prefix, latest first for a run directory") {
  TempDir dir;
  // A prefix full of regular-expression characters matches only itself.
  const std::string prefix = dir.sub("m.x+(1)");
  for (const char* name : {"m.x+(1)-0001.params", "m.x+(1)-0010.params", "m.x+(1)-12345.params",
                           "mAx+(1)-0002.params", "m.xx+(1)-0003.params", "m.x+(1)-004.params",
                           "m.x+(1)-0005.params.tmp", "m.x+(1)-0006.json", "xm.x+(1)-0007.params"})
    std::ofstream(dir.sub(name)) << "x";
  CHECK(list_checkpoints(prefix) == std::vector<int>{1, 10, 12345});
  CHECK(list_checkpoints(dir.sub("absent/model")).empty());

  CheckpointPaths latest = find_checkpoint(dir.path().string(), "m.x+(1)");
  CHECK(latest.prefix == prefix);
  CHECK(latest.epoch == 12345);
  for (const std::string& given : {prefix + "-0010", prefix + "-0010.params"}) {
    CAPTURE(given);
    const CheckpointPaths p = find_checkpoint(given, "model");
    CHECK(p.prefix == prefix);
    CHECK(p.epoch == 10);
  }
  CHECK(error_of([&] { find_checkpoint(prefix + "-0004", "model"); }) ==
        "'" + prefix + "-0004': " + prefix + "-0004.params does not exist");
  CHECK(error_of([&] { find_checkpoint(prefix + "-7", "model"); }) ==
        "--resume " + prefix +
            "-7: expected a run directory or a checkpoint such as "
            "runs/x/model-0003");
  CHECK(error_of([&] { find_checkpoint(dir.path().string(), "model"); }) ==
        "'" + dir.path().string() + "': no checkpoint model-NNNN.params in it");
}

TEST_CASE("pruning keeps the newest checkpoints and removes all four files of the others") {
  TempDir dir;
  const std::string prefix = dir.sub("model");
  for (const char* epoch : {"0001", "0002", "0003"})
    for (const char* suffix : {".params", ".json", ".states", ".states.json"})
      std::ofstream(prefix + "-" + epoch + suffix) << "x";
  prune_checkpoints(prefix, 0);  // 0: keep everything
  CHECK(list_checkpoints(prefix) == std::vector<int>{1, 2, 3});
  prune_checkpoints(prefix, 2);
  CHECK(list_checkpoints(prefix) == std::vector<int>{2, 3});
  for (const char* suffix : {".params", ".json", ".states", ".states.json"}) {
    CAPTURE(suffix);
    CHECK_FALSE(fs::exists(prefix + "-0001" + suffix));
    CHECK(fs::exists(prefix + "-0002" + suffix));
  }
}
