// How a run is watched and ended: the epoch's progress figures, the time
// budget (train.max_time) and early stopping (train.early_stop), the summary
// at the end, and the config's values checked before any data is read.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/error.h"
#include "error_text.h"
#include "metric/metric.h"
#include "temp_dir.h"
#include "train/checkpoint.h"
#include "train/config.h"
#include "train/interval_record.h"
#include "train/predict_progress.h"
#include "train/progress.h"
#include "train/run_summary.h"
#include "train/stop_rules.h"
#include "train/train_settings.h"
#include "train/trainer.h"

using namespace mx;
using namespace mx::train;
namespace fs = std::filesystem;

namespace {

struct TempDir : mx::test::TempDir {
  TempDir() : mx::test::TempDir("run_control") {}
};

// A small MLP on 6 synthetic batches of 8 (as test_trainer's).
const char* kConfig = R"(network:
  layers:
    - {op: Flatten, name: flat}
    - {op: FullyConnected, name: fc1, num_hidden: 16}
    - {op: Activation, name: relu1, act_type: relu}
    - {op: FullyConnected, name: fc2, num_hidden: 4}
    - {op: SoftmaxOutput, name: softmax}
data:
  train: {type: synthetic, data_shape: [2, 3], num_batches: 6, num_classes: 4}
  val: {type: synthetic, data_shape: [2, 3], num_batches: 2, num_classes: 4, seed: 7}
optimizer: {type: sgd, learning_rate: 0.1, momentum: 0.9}
train: {batch_size: 8, seed: 5, log_interval: 100}
)";

Config config(std::vector<std::string> overrides, const std::string& text = kConfig) {
  return Config::from_string(text, "test.yaml", overrides);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t line_count(const std::string& path) {
  std::ifstream in(path);
  size_t n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

std::string settings_error(std::vector<std::string> overrides) {
  return mx::test::error_text([&] { parse_train_settings(config(std::move(overrides))); });
}

}  // namespace

// --- progress figures ------------------------------------------------------------------------

TEST_CASE("an epoch's line: batches, rate, the epoch's and the run's time left from the pace") {
  std::ostringstream out;
  double now = 50;
  ProgressDisplay display(out, false, 80, [&] { return now; });
  EpochProgress progress(0, 3, 10, 5, std::move(display));
  auto metric = metric::make_composite({});
  for (int b = 0; b < 5; ++b) {
    now += 2;  // 2 s per batch of 8
    progress.trained(8, *metric);
  }
  // Due at batch 5: 10 s for 5 batches; 5 left in this epoch, 2 epochs of 10 after it.
  CHECK(out.str() == "epoch 1/3 batch 5/10 4.0 samples/s ETA 0:10 run 0:50\n");
  CHECK(progress.samples() == 40);
  CHECK(progress.seconds() == doctest::Approx(10));
}

TEST_CASE("every log_interval batches the interval hook gets the running metrics and place") {
  std::ostringstream out;
  double now = 0;
  EpochProgress progress(1, 2, 10, 4, ProgressDisplay(out, false, 80, [&] { return now; }));
  std::vector<IntervalPoint> seen;
  progress.on_interval([&](const IntervalPoint& p) { seen.push_back(p); });
  for (int b = 0; b < 2; ++b) progress.skip();  // a resumed epoch: batches 1-2 trained before
  auto metric = metric::make_composite({"acc"});
  for (int b = 0; b < 8; ++b) progress.trained(8, *metric);
  REQUIRE(seen.size() == 2);  // batches 4 and 8
  CHECK(seen[0].epoch == 1);
  CHECK(seen[0].batch == 4);
  CHECK(seen[1].batch == 8);
  CHECK(seen[1].batches_per_epoch == std::optional<int64_t>(10));
  CHECK(seen[1].log_interval == 4);
  REQUIRE(seen[1].running.size() == 1);
  CHECK(seen[1].running[0].name == "accuracy");
  const IntervalPoint p{0, 3, std::nullopt, 3, {{"accuracy", 0.25}}, std::nullopt, 0};
  CHECK(interval_json(p) == R"({"batch":3,"epoch":1,"log_interval":3,"train":{"accuracy":0.25}})");
  // train.loss_scale: the scale and the run's skipped steps.
  const IntervalPoint scaled{0, 3, std::nullopt, 3, {{"accuracy", 0.25}}, 1024.0, 2};
  CHECK(interval_json(scaled) ==
        R"({"batch":3,"epoch":1,"log_interval":3,"loss_scale":1024.0,"skipped_steps":2,)"
        R"("train":{"accuracy":0.25}})");
  progress.set_loss_scale(512, 3);
  CHECK(progress.progress({{"accuracy", 0.5}}).tail == " accuracy 0.5000 loss-scale 512 skipped 3");
}

TEST_CASE("a resumed epoch's skipped batches take no time in the pace") {
  std::ostringstream out;
  double now = 0;
  EpochProgress progress(1, 2, 10, 8, ProgressDisplay(out, false, 80, [&] { return now; }));
  for (int b = 0; b < 6; ++b) progress.skip();
  auto metric = metric::make_composite({});
  now += 3;
  progress.trained(8, *metric);
  now += 3;
  progress.trained(8, *metric);  // batch 8: 2 trained in 6 s, 2 left
  CHECK(out.str() == "epoch 2/2 batch 8/10 2.7 samples/s ETA 0:06 run 0:06\n");
}

// --- train.max_time and train.early_stop settings --------------------------------------------

TEST_CASE("durations: seconds, minutes, hours and their sums; anything else is an error") {
  CHECK(parse_duration("90s") == 90);
  CHECK(parse_duration("30m") == 1800);
  CHECK(parse_duration("2h") == 7200);
  CHECK(parse_duration("1h30m") == 5400);
  CHECK(parse_duration("1.5h") == 5400);
  CHECK(parse_duration("45") == 45);
  CHECK(parse_duration(" 10s ") == 10);
  for (const char* bad : {"", "abc", "10x", "1h30", "-5m", "0s", "0", "s", "1e999s", "+3m"})
    CHECK_THROWS_WITH_AS(parse_duration(bad), doctest::Contains("is not a time"), InputError);
}

TEST_CASE("train.max_time and train.early_stop are read with the metric's direction") {
  TrainSettings s = parse_train_settings(
      config({"train.max_time=30m", "train.early_stop.metric=val.accuracy",
              "train.early_stop.patience=4", "train.early_stop.min_delta=0.01"}));
  REQUIRE(s.stop.max_seconds);
  CHECK(*s.stop.max_seconds == 1800);
  REQUIRE(s.stop.early_stop);
  CHECK(s.stop.early_stop->split == "val");
  CHECK(s.stop.early_stop->metric == "accuracy");
  CHECK(s.stop.early_stop->maximize);
  CHECK(s.stop.early_stop->patience == 4);
  CHECK(s.stop.early_stop->min_delta == 0.01);
  // Losses go down; aliases and train figures work; mode overrides.
  s = parse_train_settings(config({"train.early_stop.metric=train-ce"}));
  CHECK(s.stop.early_stop->split == "train");
  CHECK(s.stop.early_stop->metric == "cross-entropy");
  CHECK_FALSE(s.stop.early_stop->maximize);
  s = parse_train_settings(config({"train.early_stop.metric=ce", "train.early_stop.mode=max"}));
  CHECK(s.stop.early_stop->split == "val");
  CHECK(s.stop.early_stop->maximize);
  CHECK_FALSE(parse_train_settings(config({})).stop.early_stop);
  CHECK_FALSE(parse_train_settings(config({})).stop.max_seconds);
}

TEST_CASE("bad train.max_time and train.early_stop values name their place") {
  CHECK(settings_error({"train.max_time=soon"}) ==
        "command line: train.max_time=soon: train.max_time 'soon' is not a time: write e.g. 90s, "
        "30m, 2h or 1h30m (or seconds as a number)");
  CHECK(settings_error({"train.early_stop.metric=val.f1"})
            .find("command line: train.early_stop.metric=val.f1: train.early_stop.metric "
                  "'val.f1' is not one of the run's metrics") == 0);
  CHECK(settings_error({"train.early_stop.metric=val.acc", "train.early_stop.patience=0"})
            .find("train.early_stop.patience=0: train.early_stop.patience must be at least 1") !=
        std::string::npos);
  CHECK(settings_error({"train.early_stop.metric=acc", "train.early_stop.min_delta=-1"})
            .find("min_delta must be 0 or more") != std::string::npos);
  CHECK(settings_error({"train.early_stop.metric=acc", "train.early_stop.mode=up"})
            .find("train.early_stop.mode must be min or max, not 'up'") != std::string::npos);
  CHECK(settings_error({"train.early_stop.patience=3"})
            .find("train.early_stop.patience=3: train.early_stop needs a metric") !=
        std::string::npos);
  CHECK(settings_error({"train.early_stop.metric=acc", "train.early_stop.patients=3"})
            .find("unknown key 'train.early_stop.patients' (did you mean "
                  "'train.early_stop.patience'?)") != std::string::npos);
  // Validation figures need validation data.
  const std::string no_val = mx::test::error_text([] {
    parse_train_settings(config(
        {"train.early_stop.metric=val.accuracy"},
        std::string(kConfig).replace(
            std::string(kConfig).find("  val:"),
            std::string(kConfig).find("optimizer") - std::string(kConfig).find("  val:"), "")));
  });
  CHECK(no_val.find("has no validation data (data.val)") != std::string::npos);
}

TEST_CASE("early stopping counts the epochs without an improvement larger than min_delta") {
  EarlyStopSettings s;
  s.metric = "accuracy";
  s.patience = 2;
  s.min_delta = 0.05;
  EarlyStop stop(s);
  auto val = [](double v) { return std::vector<metric::MetricValue>{{"accuracy", v}}; };
  CHECK_FALSE(stop.after_epoch(1, {}, val(0.5)));
  CHECK_FALSE(stop.after_epoch(2, {}, val(0.54)));  // not by more than 0.05: stale 1
  CHECK_FALSE(stop.after_epoch(3, {}, val(0.6)));   // improved: stale 0
  CHECK(stop.best_epoch() == 3);
  CHECK_FALSE(stop.after_epoch(4, {}, val(0.1)));
  const auto why = stop.after_epoch(5, {}, val(std::nan("")));  // NaN is no improvement
  REQUIRE(why);
  CHECK(*why ==
        "early stop: val-accuracy has not improved by more than 0.05 for 2 epochs (best 0.6 at "
        "epoch 3)");
  // A loss must go down.
  s.metric = "cross-entropy";
  s.maximize = false;
  s.min_delta = 0;
  s.patience = 1;
  EarlyStop loss(s);
  auto ce = [](double v) { return std::vector<metric::MetricValue>{{"cross-entropy", v}}; };
  CHECK_FALSE(loss.after_epoch(1, {}, ce(1.0)));
  CHECK_FALSE(loss.after_epoch(2, {}, ce(0.9)));
  CHECK(loss.after_epoch(3, {}, ce(0.95)));
}

// --- the run's end ---------------------------------------------------------------------------

TEST_CASE("the summary names the best epoch, the checkpoints, the curves and mx-predict") {
  TempDir dir;
  const std::string prefix = (dir.path() / "model").string();
  for (int e : {2, 3}) std::ofstream(CheckpointPaths{prefix, e}.params()) << "x";
  RunSummary summary;  // no early_stop: the first validation metric with a direction
  auto figures = [](double acc, double ce) {
    return std::vector<metric::MetricValue>{{"accuracy", acc}, {"cross-entropy", ce}};
  };
  summary.record(1, figures(0.5, 1.0), figures(0.55, 0.9));
  summary.record(2, figures(0.6, 0.8), figures(0.7, 0.7));
  summary.record(3, figures(0.7, 0.6), figures(0.65, 0.75));
  const auto lines = summary.lines(dir.path().string(), prefix, 3, "t10k --labels l10k");
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] ==
        "best epoch 2 (by val-accuracy): train-accuracy 0.6000 train-cross-entropy 0.8000 "
        "val-accuracy 0.7000 val-cross-entropy 0.7000");
  CHECK(lines[1] ==
        "checkpoints: " + prefix + "-0003.params (last), " + prefix + "-0002.params (best)");
  CHECK(lines[2] == "curves: " + (dir.path() / "curves.png").string() +
                        ", metrics: " + (dir.path() / "metrics.jsonl").string());
  CHECK(lines[3] == "predict with: mx-predict --model " + prefix + "-0002 t10k --labels l10k");
  // The best checkpoint pruned: the last one; early_stop's metric decides.
  fs::remove(CheckpointPaths{prefix, 2}.params());
  EarlyStopSettings watch;
  watch.metric = "cross-entropy";
  watch.maximize = false;
  watch.split = "train";
  RunSummary by_loss(watch);
  by_loss.record(1, figures(0.5, 1.0), {});
  by_loss.record(2, figures(0.6, 0.8), {});
  by_loss.record(3, figures(0.7, 0.9), {});
  const auto l2 = by_loss.lines(dir.path().string(), prefix, 3, "IMAGE...");
  CHECK(RunSummary().lines("r", "r/model", -1, "x") ==
        std::vector<std::string>{"checkpoints: none written (train.checkpoint_every: 0)",
                                 "curves: r/curves.png, metrics: r/metrics.jsonl"});
  CHECK(l2[0].rfind("best epoch 2 (by train-cross-entropy):", 0) == 0);
  CHECK(l2[1] == "checkpoints: " + prefix + "-0003.params (last)");
  CHECK(l2[3] == "predict with: mx-predict --model " + prefix + "-0003 IMAGE...");
}

TEST_CASE("mx-predict's inputs come from the run's validation data") {
  CHECK(predict_inputs_for(config({})) == "IMAGE...");
  CHECK(predict_inputs_for(config({"data.val={type: mnist, image: v-img, label: v-lab}"})) ==
        "v-img --labels v-lab");
  CHECK(predict_inputs_for(config({"data.val={type: ImageRecordIter, path_imgrec: v.rec}"})) ==
        "v.rec");
}

// --- whole runs ------------------------------------------------------------------------------

TEST_CASE("train.max_time stops at a batch with a checkpoint that resumes to the same result") {
  TempDir dir;
  const std::string whole = (dir.path() / "whole").string(),
                    split = (dir.path() / "split").string();
  {
    Trainer t(config({"train.epochs=2"}), {"test", "", whole, false});
    t.train();
  }
  {
    // A budget used up by the first batch.
    Trainer t(config({"train.epochs=2", "train.max_time=0.000001s"}), {"test", "", split, false});
    t.train();
    CHECK_FALSE(t.interrupted());
  }
  const std::string log = read(split + "/train.log");
  CHECK(log.find("train.max_time (0:00) used up in epoch 1 after batch 1; checkpoint ") !=
        std::string::npos);
  CHECK(log.find("continue with: mx-train --resume " + split + "/model-0000") != std::string::npos);
  CHECK(load_trainer_state(split + "/model-0000.json").batches_done == 1);
  CHECK(line_count(split + "/metrics.jsonl") == 0);
  CHECK(log.find("checkpoints: " + split + "/model-0000.params (last)") != std::string::npos);
  {
    Trainer t(config({"train.epochs=2"}), {"test", split, "", false});
    t.train();
  }
  const std::string a = read(whole + "/model-0002.params"), b = read(split + "/model-0002.params");
  CHECK(!a.empty());
  CHECK(a == b);
}

TEST_CASE("train.early_stop ends the run with a checkpoint and says why; the summary follows") {
  TempDir dir;
  const std::string run = (dir.path() / "run").string();
  // No improvement can beat min_delta 10: the best is epoch 1, two stale epochs later it stops.
  Trainer t(config({"train.epochs=10", "train.checkpoint_every=5",
                    "train.early_stop={metric: val.accuracy, patience: 2, min_delta: 10}"}),
            {"test", "", run, false});
  t.train();
  CHECK(line_count(run + "/metrics.jsonl") == 3);
  CHECK(list_checkpoints(run + "/model") == std::vector<int>{3});
  const std::string log = read(run + "/train.log");
  CHECK(log.find("early stop: val-accuracy has not improved by more than 10 for 2 epochs (best ") !=
        std::string::npos);
  CHECK(log.find("at epoch 1); stopped after epoch 3/10; checkpoint " + run +
                 "/model-0003.params") != std::string::npos);
  // The summary's best epoch is the best figure's (min_delta decides only when to stop).
  CHECK(log.find("best epoch 3 (by val-accuracy): train-accuracy ") != std::string::npos);
  CHECK(log.find("checkpoints: " + run + "/model-0003.params (last)") != std::string::npos);
  CHECK(log.find("predict with: mx-predict --model " + run + "/model-0003 IMAGE...") !=
        std::string::npos);
}

// --- values checked before any data is read ---------------------------------------------------

TEST_CASE("a typo in data.* or initializer.* is reported at its line before any data is read") {
  TempDir dir;
  // Data files that do not exist: a check after reading would fail on them first.
  const std::string mnist = std::string(kConfig).replace(
      std::string(kConfig).find("  train: {type: synthetic"),
      std::string(kConfig).find("  val:") - std::string(kConfig).find("  train: {type: synthetic"),
      "  train:\n    type: mnist\n    image: missing-images\n    label: missing-labels\n");
  const std::string run = (dir.path() / "run").string();
  auto build = [&](const std::string& text, std::vector<std::string> overrides) {
    return mx::test::error_text([&] {
      Trainer t(config(std::move(overrides), text), {"test", "", run, false});
    });
  };
  CHECK(build(mnist, {}).find("missing-images") != std::string::npos);  // the files are read last
  const std::string typo_val = std::string(mnist).replace(mnist.find("seed: 7"), 7, "sed: 7");
  CHECK(build(typo_val, {}).rfind("test.yaml:13:", 0) == 0);
  CHECK(build(typo_val, {}).find("'sed'") != std::string::npos);
  const std::string typo_train =
      std::string(mnist).replace(mnist.find("    label:"), 10, "    labl:");
  CHECK(build(typo_train, {}).rfind("test.yaml:12:", 0) == 0);
  CHECK(build(typo_train, {}).find("'labl'") != std::string::npos);
  CHECK(build(mnist, {"initializer.type=xavier", "initializer.magnitud=2"})
            .rfind("command line: initializer.magnitud=2: ", 0) == 0);
  CHECK(build(mnist, {"initializer.type=xavier", "initializer.magnitude=abc"})
            .rfind("command line: initializer.magnitude=abc: ", 0) == 0);
  CHECK(build(mnist, {"initializer.type=xavierr"})
            .rfind("command line: initializer.type=xavierr: ", 0) == 0);
  CHECK(build(mnist, {"data.val.num_batches=lots"})
            .rfind("command line: data.val.num_batches=lots: ", 0) == 0);
  CHECK(build(mnist, {"train.metrics=[acc, f1]"}).rfind("command line: train.metrics=", 0) == 0);
  CHECK_FALSE(fs::exists(run));  // nothing written either
}

// --- mx-predict's progress -------------------------------------------------------------------

TEST_CASE("mx-predict's progress stays quiet on short inputs and shows batches on long ones") {
  std::ostringstream out;
  double now = 0;
  {
    PredictProgress progress("t10k", 4, ProgressDisplay(out, false, 80, [&] { return now; }), 2, 5);
    now = 1;
    progress.batch_done(100);
    CHECK(out.str().empty());  // under 2 s
    now = 2.5;
    progress.batch_done(100);  // the first line after the quiet time
    now = 3;
    progress.batch_done(100);  // not yet 5 s after it
    now = 4;
    progress.batch_done(100);  // the last batch
  }
  CHECK(out.str() ==
        "t10k: batch 2/4 80.0 examples/s ETA 0:03\n"
        "t10k: batch 4/4 100 examples/s ETA 0:00\n");
  std::ostringstream fast;
  {
    PredictProgress progress("x", 2, ProgressDisplay(fast, true, 80, [&] { return now; }), 2, 5);
    progress.batch_done(1);
    progress.batch_done(1);
  }
  CHECK(fast.str().empty());
}

TEST_CASE("on a terminal the epoch's bar ends drawn full, even between redraws") {
  std::ostringstream out;
  double now = 0;  // the clock never moves: only due lines are drawn
  EpochProgress progress(0, 1, 3, 100, ProgressDisplay(out, true, 120, [&] { return now; }));
  auto metric = metric::make_composite({});
  for (int b = 0; b < 3; ++b) progress.trained(8, *metric);
  progress.end_line();
  const std::string text = out.str();
  CHECK(text.find("[##############################] 3/3 ") != std::string::npos);
  CHECK(text.back() == '\n');
}
