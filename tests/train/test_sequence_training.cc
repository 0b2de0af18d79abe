// Sequence models through the trainer: recurrent layers of the network
// language (layouts, carried states), truncated BPTT across batches, a
// language model that learns, and the settings that only make sense for
// sequences (clip_global_norm, perplexity).
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "executor/executor.h"
#include "ndarray/params_io.h"
#include "temp_dir.h"
#include "train/carried_states.h"
#include "train/config.h"
#include "train/network_yaml.h"
#include "train/train_settings.h"
#include "train/trainer.h"

using namespace mx;
using namespace mx::train;

namespace {

graph::Symbol build(const std::string& text) { return build_network(YAML::Load(text), "net.yaml"); }

const char* kCarryNet = R"(
layers:
  - {op: Embedding, name: embed, input_dim: 12, output_dim: 5}
  - {op: RNN, name: lstm, mode: lstm, state_size: 6, num_layers: 2, layout: NTC, begin_state: carry}
  - {op: Reshape, name: flat, shape: [-1, 6]}
  - {op: FullyConnected, name: fc, num_hidden: 12}
  - {op: SoftmaxOutput, name: softmax}
)";

// Token windows of a text whose next character follows from the last few:
// data row i is tokens [i*T, (i+1)*T), its label the same shifted by one.
void write_lm_csv(const std::string& data, const std::string& label, int rows, int steps) {
  const std::string text = "abcabdabcabdaacbbd";
  std::ofstream d(data), l(label);
  auto token = [&](int k) { return text[static_cast<size_t>(k) % text.size()] - 'a'; };
  for (int r = 0; r < rows; ++r)
    for (int t = 0; t < steps; ++t) {
      const int k = r * steps + t;
      d << token(k) << (t + 1 < steps ? "," : "\n");
      l << token(k + 1) << (t + 1 < steps ? "," : "\n");
    }
}

// A config training `net` (a "layers:" list) on the CSV files of write_lm_csv,
// with `rest` (optimizer and train sections) after the data section.
std::string lm_config(const std::string& net, const std::string& data, const std::string& label,
                      const std::string& rest) {
  std::string text = "network:\n";
  for (size_t start = net.find_first_not_of('\n'); start < net.size();) {
    const size_t end = net.find('\n', start);
    text += "  " + net.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return text + "data:\n  train: {type: CSVIter, data_csv: " + data +
         ", data_shape: [6], label_csv: " + label + ", label_shape: [6]}\n" + rest;
}

std::vector<double> perplexities(const std::string& metrics_path) {
  std::ifstream in(metrics_path);
  std::vector<double> out;
  for (std::string line; std::getline(in, line);)
    out.push_back(nlohmann::json::parse(line)["train"]["perplexity"].get<double>());
  return out;
}

}  // namespace

TEST_CASE(
    "a recurrent layer carries its states as inputs marked __carry__ and outputs after the "
    "network's") {
  const graph::Symbol net = build(kCarryNet);
  const auto args = net.list_arguments();
  CHECK(args == std::vector<std::string>{"data", "embed_weight", "lstm_parameters",
                                         "lstm_begin_state", "lstm_begin_state_cell", "fc_weight",
                                         "fc_bias", "softmax_label"});
  CHECK(net.list_outputs() == std::vector<std::string>{"softmax_output", "lstm_state_carry_output",
                                                       "lstm_statecell_carry_output"});
  const CarriedStates carried(net);
  CHECK(carried.inputs() == std::vector<std::string>{"lstm_begin_state", "lstm_begin_state_cell"});
  // The states' shapes follow from the data's.
  const auto shapes = net.infer_shape({{"data", Shape{4, 7}}});
  CHECK(shapes.arguments[3] == Shape{2, 4, 6});
  CHECK(shapes.outputs[0] == Shape{28, 12});
}

TEST_CASE("a carried state takes the layer's final state, and the next batch starts from it") {
  const graph::Symbol net = build(kCarryNet);
  BindOptions options;
  options.grad_req = {{"data", graph::GradReq::kNull}, {"softmax_label", graph::GradReq::kNull}};
  auto exe =
      Executor::simple_bind(net, {{"data", Shape{3, 4}}, {"softmax_label", Shape{12}}}, options);
  int salt = 0;
  for (const auto& [name, a] : exe->arg_dict()) {
    if (name == "data" || name == "softmax_label") continue;
    std::vector<float> v(static_cast<size_t>(a.size()));
    for (size_t k = 0; k < v.size(); ++k)
      v[k] = 0.4f * std::sin(0.7f * static_cast<float>(k) + static_cast<float>(++salt));
    NDArray target = a;
    NDArray::from_vector<float>(a.shape(), v).copy_to(target);
  }
  NDArray data = exe->arg_dict().at("data");
  NDArray::from_vector<float>(Shape{3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0}).copy_to(data);
  const CarriedStates carried(net);
  carried.reset(*exe);
  exe->forward(false);
  const auto first = exe->outputs()[0].to_vector<float>();
  carried.carry(*exe);
  CHECK(exe->arg_dict().at("lstm_begin_state").to_vector<float>() ==
        exe->outputs()[1].to_vector<float>());
  // The same batch from the carried state predicts something else.
  exe->forward(false);
  CHECK(exe->outputs()[0].to_vector<float>() != first);
  carried.reset(*exe);
  exe->forward(false);
  CHECK(exe->outputs()[0].to_vector<float>() == first);
}

TEST_CASE("layout NTC is TNC with the batch first") {
  const graph::Symbol ntc = build(R"(
layers:
  - {op: RNN, name: gru, mode: gru, state_size: 3, num_layers: 1, layout: NTC}
)");
  CHECK(ntc.infer_shape({{"data", Shape{2, 5, 4}}}).outputs[0] == Shape{2, 5, 3});
  const graph::Symbol tnc = build(R"(
layers:
  - {op: RNN, name: gru, mode: gru, state_size: 3, num_layers: 1}
)");
  CHECK(tnc.infer_shape({{"data", Shape{5, 2, 4}}}).outputs[0] == Shape{5, 2, 3});
}

TEST_CASE("recurrent layer options are checked with the layer named") {
  CHECK_THROWS_WITH_AS(build(R"(
layers:
  - {op: RNN, name: r, mode: lstm, state_size: 3, num_layers: 1, layout: BTC}
)"),
                       doctest::Contains("layer 'r': layout must be TNC"), InputError);
  CHECK_THROWS_WITH_AS(build(R"(
layers:
  - {op: RNN, name: r, mode: lstm, state_size: 3, num_layers: 1, begin_state: learned}
)"),
                       doctest::Contains("begin_state must be zeros or carry"), InputError);
}

TEST_CASE("a language model trains from YAML: perplexity falls, and a seeded run repeats") {
  mx::test::TempDir dir("seqtrain");
  write_lm_csv(dir.file("data.csv"), dir.file("label.csv"), 48, 6);
  std::ofstream(dir.file("lm.yaml"))
      << lm_config(kCarryNet, dir.file("data.csv"), dir.file("label.csv"), R"(
optimizer: {type: adam, learning_rate: 0.02, clip_global_norm: 2.0}
train: {epochs: 4, batch_size: 8, seed: 3, metrics: [perplexity], log_interval: 100}
)");
  auto run = [&](const std::string& name) {
    TrainOptions options;
    options.run_dir = dir.file(name);
    Trainer trainer(Config::load(dir.file("lm.yaml"), {}), options);
    trainer.train();
    return perplexities(dir.file(name) + "/metrics.jsonl");
  };
  const auto first = run("a");
  REQUIRE(first.size() == 4);
  CHECK(first.back() < 0.6 * first.front());
  CHECK(run("b") == first);
}

// A language model's output has one row per step of each sequence: the
// training metrics must count all of them (they once counted the first
// batch-size rows only, the first steps of the first sequences), and of the
// padded last batch those of its real sequences.
TEST_CASE("the training metrics count every step of every sequence, padding left out") {
  mx::test::TempDir dir("seqmetric");
  const int rows = 10, steps = 6;  // batches of 4: 4, 4, and 2 real + 2 padding
  write_lm_csv(dir.file("data.csv"), dir.file("label.csv"), rows, steps);
  std::string net = kCarryNet;
  net.replace(net.find("begin_state: carry"), 18, "begin_state: zeros");
  std::ofstream(dir.file("lm.yaml")) << lm_config(net, dir.file("data.csv"), dir.file("label.csv"),
                                                  R"(
optimizer: {type: sgd, learning_rate: 0}
train: {epochs: 1, batch_size: 4, seed: 5, metrics: [perplexity], log_interval: 100}
)");
  TrainOptions options;
  options.run_dir = dir.file("run");
  Trainer(Config::load(dir.file("lm.yaml"), {}), options).train();
  const auto reported = perplexities(dir.file("run/metrics.jsonl"));
  REQUIRE(reported.size() == 1);

  // The same network and (unchanged) parameters on all ten sequences at once.
  const graph::Symbol symbol = build(net);
  BindOptions bind;
  bind.grad_req = {{"data", graph::GradReq::kNull}, {"softmax_label", graph::GradReq::kNull}};
  auto exe = Executor::simple_bind(
      symbol, {{"data", Shape{rows, steps}}, {"softmax_label", Shape{rows * steps}}}, bind);
  const NamedArrays saved = load_params(dir.file("run/model-0001.params"));
  for (auto& [name, a] : exe->arg_dict())
    if (name != "data" && name != "softmax_label") {
      NDArray target = a;
      saved.get("arg:" + name).copy_to(target);
    }
  auto read_csv = [](const std::string& path) {
    std::vector<float> values;
    std::ifstream in(path);
    for (float v; in >> v;) {
      values.push_back(v);
      if (in.peek() == ',') in.get();
    }
    return values;
  };
  const auto tokens = read_csv(dir.file("data.csv")), labels = read_csv(dir.file("label.csv"));
  REQUIRE(tokens.size() == static_cast<size_t>(rows * steps));
  NDArray data = exe->arg_dict().at("data");
  NDArray::from_vector<float>(Shape{rows, steps}, tokens).copy_to(data);
  exe->forward(false);
  const auto probs = exe->outputs()[0].to_vector<float>();
  double nll = 0;
  for (size_t i = 0; i < labels.size(); ++i)
    nll -= std::log(static_cast<double>(probs[i * 12 + static_cast<size_t>(labels[i])]));
  const double expected = std::exp(nll / static_cast<double>(labels.size()));
  CHECK(reported[0] == doctest::Approx(expected).epsilon(1e-5));
}

TEST_CASE("clip_global_norm is positive and refused where only servers see the batch") {
  auto settings = [](const std::string& extra) {
    return parse_train_settings(
        Config::from_string("optimizer: {type: sgd, clip_global_norm: " + extra, "c.yaml", {}));
  };
  CHECK(settings("5}").clip_global_norm == 5.0);
  CHECK_THROWS_WITH_AS(settings("0}"), doctest::Contains("must be a positive number"), InputError);
  CHECK_THROWS_WITH_AS(settings("1}\nkvstore: dist_sync"),
                       doctest::Contains("use optimizer.clip_gradient there"), InputError);
}
