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
  const std::string config = std::string("network:\n") + [] {
    std::string net = kCarryNet, indented;
    for (size_t start = 1; start < net.size();) {
      const size_t end = net.find('\n', start);
      indented += "  " + net.substr(start, end - start) + "\n";
      start = end + 1;
    }
    return indented;
  }() + R"(
data:
  train: {type: CSVIter, data_csv: DATA, data_shape: [6], label_csv: LABEL, label_shape: [6]}
optimizer: {type: adam, learning_rate: 0.02, clip_global_norm: 2.0}
train: {epochs: 4, batch_size: 8, seed: 3, metrics: [perplexity], log_interval: 100}
)";
  std::string text = config;
  text.replace(text.find("DATA"), 4, dir.file("data.csv"));
  text.replace(text.find("LABEL"), 5, dir.file("label.csv"));
  std::ofstream(dir.file("lm.yaml")) << text;
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
