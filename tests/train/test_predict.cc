#include <doctest/doctest.h>

#include <cmath>
#include <numeric>
#include <vector>

#include "graph/symbol.h"
#include "train/predict_inputs.h"

using namespace mx;
using namespace mx::train;

namespace {

graph::Symbol logits() {
  auto data = graph::Symbol::variable("data");
  return graph::Symbol::create("FullyConnected", "fc1", {{"num_hidden", "4"}}, {data});
}

}  // namespace

TEST_CASE("a network that ends in a softmax reports its outputs as probabilities") {
  auto net = graph::Symbol::create("SoftmaxOutput", "softmax", {}, {logits()});
  const auto r = read_output(net, false);
  CHECK(r.kind == OutputReading::Kind::probability);
  CHECK(r.key() == "probability");
  CHECK(r.note().empty());
  std::vector<float> v{0.1f, 0.7f, 0.2f};
  r.apply(v.data(), 3);
  CHECK(v == std::vector<float>{0.1f, 0.7f, 0.2f});
  CHECK(read_output(graph::Symbol::create("softmax", "sm", {}, {logits()}), false).kind ==
        OutputReading::Kind::probability);
}

TEST_CASE("logits get a softmax, said once, and --raw keeps them as scores") {
  const auto r = read_output(logits(), false);
  CHECK(r.kind == OutputReading::Kind::softmax_applied);
  CHECK(r.key() == "probability");
  CHECK(r.note() ==
        "the network ends in FullyConnected 'fc1' without a softmax; probabilities are the "
        "softmax of its outputs (--raw: the outputs)");
  std::vector<float> v{1.0f, 3.0f, -2.0f, 1000.0f};  // 1000: no overflow in exp
  r.apply(v.data(), 4);
  CHECK(std::accumulate(v.begin(), v.end(), 0.0) == doctest::Approx(1.0));
  CHECK(v[3] == doctest::Approx(1.0));
  std::vector<float> w{1.0f, 2.0f};
  r.apply(w.data(), 2);
  CHECK(w[0] == doctest::Approx(1 / (1 + std::exp(1.0))));
  CHECK(w[1] == doctest::Approx(std::exp(1.0) / (1 + std::exp(1.0))));

  const auto raw = read_output(logits(), true);
  CHECK(raw.kind == OutputReading::Kind::raw);
  CHECK(raw.key() == "score");
  CHECK(raw.note() == "scores are the raw outputs of FullyConnected 'fc1'");
  std::vector<float> u{1.0f, 3.0f};
  raw.apply(u.data(), 2);
  CHECK(u == std::vector<float>{1.0f, 3.0f});
}

TEST_CASE("log_softmax outputs become probabilities with exp") {
  const auto r = read_output(graph::Symbol::create("log_softmax", "ls", {}, {logits()}), false);
  CHECK(r.kind == OutputReading::Kind::exp_applied);
  std::vector<float> v{std::log(0.25f), std::log(0.75f)};
  r.apply(v.data(), 2);
  CHECK(v[0] == doctest::Approx(0.25));
  CHECK(v[1] == doctest::Approx(0.75));
}
