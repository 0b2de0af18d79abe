// Metrics against MXNet 1.9.1's mx.metric values (fixtures from
// scripts/fixtures/make_optim_fixtures.py) and hand-computed values; reset,
// composite, asynchronous inputs and error messages.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "base/error.h"
#include "base/strings.h"
#include "metric/metric.h"
#include "ndarray/ndarray.h"
#include "ndarray/params_io.h"

using namespace mx;
using namespace mx::metric;

namespace {

const std::string kFixtures = std::string(MX_FIXTURES_DIR) + "/optim/";

NDArray floats(const Shape& shape, std::vector<float> v) {
  return NDArray::from_vector<float>(shape, std::move(v));
}

double value_of(const Metric& m) {
  auto values = m.get_all();
  REQUIRE(values.size() == 1);
  return values[0].value;
}

}  // namespace

TEST_CASE("metrics: every case equals MXNet 1.9.1's mx.metric") {
  std::ifstream in(kFixtures + "metrics.cases");
  REQUIRE(in.good());
  const NamedArrays fx = load_params(kFixtures + "metrics.params");
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    const auto parts = split(line, '\t');
    const std::string id = parts[0];
    INFO("case ", id);
    const auto names = split(parts[1], '+');
    std::map<std::string, std::string> params;
    int batches = 0;
    std::vector<MetricValue> expected;
    for (size_t i = 2; i < parts.size(); ++i) {
      const auto eq = parts[i].find('=');
      const std::string key = parts[i].substr(0, eq), value = parts[i].substr(eq + 1);
      if (key == "batches")
        batches = std::stoi(value);
      else if (batches == 0)
        params[key] = value;  // parameters come before batches=
      else
        expected.push_back({key, std::stod(value)});
    }
    std::unique_ptr<Metric> metric;
    if (names.size() == 1)
      metric = make_metric(names[0], params);
    else
      metric = make_composite(names);
    for (int b = 0; b < batches; ++b)
      metric->update({fx.get(str(id, ":label", b))}, {fx.get(str(id, ":pred", b))});
    const auto got = metric->get_all();
    REQUIRE(got.size() == expected.size());
    for (size_t k = 0; k < got.size(); ++k) {
      CHECK(got[k].name == expected[k].name);
      // MXNet sums float32 numpy values; mx sums in double.
      CHECK(got[k].value == doctest::Approx(expected[k].value).epsilon(1e-6));
    }
    ++cases;
  }
  CHECK(cases >= 12);
}

TEST_CASE("metrics: hand-computed values") {
  SUBCASE("accuracy (MXNet's docstring example)") {
    auto acc = make_metric("acc");
    acc->update({floats({3}, {0, 1, 1})}, {floats({3, 2}, {0.3f, 0.7f, 0, 1, 0.4f, 0.6f})});
    CHECK(acc->get().name == "accuracy");
    CHECK(acc->get().value == doctest::Approx(2.0 / 3));
    CHECK(acc->num_inst() == 3);
    CHECK(acc->sum_metric() == 2);
  }
  SUBCASE("accuracy: ties go to the first class, labels are truncated") {
    auto acc = make_metric("accuracy");
    acc->update({floats({2}, {0.9f, 1.2f})}, {floats({2, 2}, {0.5f, 0.5f, 0.2f, 0.8f})});
    CHECK(value_of(*acc) == 1.0);
  }
  SUBCASE("top-k: ranks, ties, and k beyond the classes") {
    auto top2 = make_metric("top_k_accuracy", {{"top_k", "2"}});
    CHECK(top2->name() == "top_k_accuracy_2");
    // Rows: label is best, second, third; a tie for second goes to the lower index.
    top2->update({floats({4}, {0, 1, 2, 2})}, {floats({4, 3}, {0.9f, 0.05f, 0.05f,  //
                                                               0.3f, 0.5f, 0.2f,    //
                                                               0.5f, 0.3f, 0.2f,    //
                                                               0.6f, 0.2f, 0.2f})});
    CHECK(value_of(*top2) == doctest::Approx(0.5));
    auto top9 = make_metric("top_k_acc", {{"top_k", "9"}});
    top9->update({floats({2}, {3, 0})}, {floats({2, 4}, {1, 2, 3, 4, 4, 3, 2, 1})});
    CHECK(value_of(*top9) == 1.0);
  }
  SUBCASE("cross-entropy with float64 predictions and int32 labels") {
    auto ce = make_metric("cross-entropy", {{"eps", "0"}});
    ce->update({NDArray::from_vector<int32_t>({2}, {1, 0})},
               {NDArray::from_vector<double>({2, 2}, {0.5, 0.5, 0.25, 0.75})});
    CHECK(ce->get().name == "cross-entropy");
    CHECK(value_of(*ce) == doctest::Approx((std::log(2.0) + std::log(4.0)) / 2));
  }
  SUBCASE("mse, mae, rmse average per batch, as MXNet 1.9") {
    auto mse = make_metric("mse"), mae = make_metric("mae"), rmse = make_metric("rmse");
    for (auto* m : {mse.get(), mae.get(), rmse.get()}) {
      m->update({floats({2}, {0, 0})}, {floats({2}, {1, -1})});  // errors 1, 1
      m->update({floats({1}, {0})}, {floats({1, 1}, {3})});      // error 3; (1,) and (1, 1) agree
    }
    CHECK(value_of(*mse) == doctest::Approx((1.0 + 9.0) / 2));
    CHECK(value_of(*mae) == doctest::Approx((1.0 + 3.0) / 2));
    // Per-batch roots 1 and 3, not sqrt(11 / 3).
    CHECK(value_of(*rmse) == doctest::Approx(2.0));
    CHECK(rmse->num_inst() == 2);
  }
}

TEST_CASE("metrics: several label/prediction pairs in one update") {
  auto acc = make_metric("acc");
  acc->update({floats({2}, {0, 1}), floats({1}, {1})},
              {floats({2, 2}, {1, 0, 1, 0}), floats({1, 2}, {0, 1})});
  CHECK(acc->num_inst() == 3);
  CHECK(value_of(*acc) == doctest::Approx(2.0 / 3));
  auto mse = make_metric("mse");
  mse->update({floats({1}, {0}), floats({1}, {0})}, {floats({1}, {2}), floats({1}, {4})});
  CHECK(mse->num_inst() == 2);  // one per pair
  CHECK(value_of(*mse) == doctest::Approx(10.0));
}

TEST_CASE("metrics: reset, NaN before updates, and inputs still being computed") {
  auto acc = make_metric("acc");
  CHECK(std::isnan(value_of(*acc)));
  // Predictions produced by pending engine operations: update orders after them.
  NDArray pred = NDArray::zeros({1000, 2});
  NDArray label = NDArray::zeros({1000});
  for (int i = 0; i < 20; ++i) pred += 0.01;  // ties: argmax 0 == label
  acc->update({label}, {pred});
  label += 1.0;  // pushed after the update: must not affect it
  CHECK(value_of(*acc) == 1.0);
  acc->update({label}, {pred});
  CHECK(value_of(*acc) == doctest::Approx(0.5));
  acc->reset();
  CHECK(std::isnan(value_of(*acc)));
  acc->update({label}, {pred});
  CHECK(value_of(*acc) == 0.0);
  CHECK(acc->num_inst() == 1000);
}

TEST_CASE("metrics: composite") {
  auto c = make_composite({"acc", "ce"});
  c->add(make_metric("top_k_accuracy", {{"top_k", "2"}}));
  REQUIRE(c->size() == 3);
  c->reset();
  c->update({floats({2}, {1, 0})}, {floats({2, 3}, {0.2f, 0.5f, 0.3f, 0.1f, 0.6f, 0.3f})});
  auto values = c->get_all();
  REQUIRE(values.size() == 3);
  CHECK(values[0].name == "accuracy");
  CHECK(values[0].value == doctest::Approx(0.5));
  CHECK(values[1].name == "cross-entropy");
  CHECK(values[1].value == doctest::Approx((-std::log(0.5) - std::log(0.1)) / 2));
  CHECK(values[2].name == "top_k_accuracy_2");
  CHECK(values[2].value == doctest::Approx(0.5));
  c->reset();
  for (const auto& v : c->get_all()) CHECK(std::isnan(v.value));
  CHECK_THROWS_AS(c->at(3), Error);
  // By name only, top-k lacks its required top_k.
  CHECK_THROWS_WITH_AS(make_composite({"acc", "top_k_accuracy"}),
                       doctest::Contains("required parameter 'top_k'"), InputError);
}

TEST_CASE("metrics: bad names, parameters and shapes give clear errors") {
  CHECK_THROWS_WITH_AS(make_metric("acuracy"), doctest::Contains("did you mean 'accuracy'"),
                       InputError);
  CHECK_THROWS_WITH_AS(make_metric("acc", {{"axes", "1"}}),
                       doctest::Contains("did you mean 'axis'"), InputError);
  CHECK_THROWS_WITH_AS(make_metric("top_k_accuracy", {{"top_k", "1"}}),
                       doctest::Contains("'top_k'"), InputError);
  CHECK_THROWS_WITH_AS(make_metric("mse", {{"eps", "1"}}), doctest::Contains("takes no parameters"),
                       InputError);

  auto acc = make_metric("acc");
  CHECK_THROWS_WITH_AS(acc->update({floats({2}, {0, 1})}, {}),
                       doctest::Contains("1 label arrays but 0 prediction arrays"), InputError);
  CHECK_THROWS_WITH_AS(acc->update({floats({3}, {0, 1, 1})}, {floats({2, 2}, {1, 0, 0, 1})}),
                       doctest::Contains("labels of shape (3,) and predictions of shape (2, 2)"),
                       InputError);
  auto acc3 = make_metric("acc", {{"axis", "3"}});
  CHECK_THROWS_WITH_AS(acc3->update({floats({2}, {0, 1})}, {floats({2, 2}, {1, 0, 0, 1})}),
                       doctest::Contains("axis 3"), InputError);
  auto top = make_metric("top_k_acc", {{"top_k", "3"}});
  CHECK_THROWS_WITH_AS(top->update({floats({2}, {0, 1})}, {floats({2}, {0, 1})}),
                       doctest::Contains("must be (batch, classes)"), InputError);
  auto mse = make_metric("mse");
  CHECK_THROWS_WITH_AS(mse->update({floats({2}, {0, 1})}, {floats({2, 3}, {0, 1, 2, 3, 4, 5})}),
                       doctest::Contains("differ"), InputError);
  // Nothing was added by the rejected updates.
  CHECK(std::isnan(value_of(*acc)));

  // A label that is not a class is only seen when the batch is read: the
  // error reaches get() and stays until reset().
  auto ce = make_metric("ce");
  ce->update({floats({2}, {0, 5})}, {floats({2, 2}, {0.5f, 0.5f, 0.5f, 0.5f})});
  CHECK_THROWS_WITH_AS(ce->get(), doctest::Contains("label 5 of sample 1 is not a class in [0, 2)"),
                       Error);
  ce->update({floats({1}, {0})}, {floats({1, 2}, {0.5f, 0.5f})});
  CHECK_THROWS_AS(ce->get(), Error);
  ce->reset();
  ce->update({floats({1}, {0})}, {floats({1, 2}, {0.5f, 0.5f})});
  CHECK(value_of(*ce) == doctest::Approx(std::log(2.0)));
}

TEST_CASE("metrics: perplexity as MXNet 1.9.1 computes it, over labels of any shape") {
  // Values from mx.metric.Perplexity(ignore_label) on the same arrays.
  const NDArray pred = NDArray::from_vector<float>(
      Shape{4, 3}, {0.1f, 0.7f, 0.2f, 0.5f, 0.25f, 0.25f, 0.0f, 0.0f, 1.0f, 0.3f, 0.3f, 0.4f});
  const NDArray label = NDArray::from_vector<float>(Shape{2, 2}, {1, 0, 2, 0});
  auto all = make_metric("perplexity");
  all->update({label}, {pred});
  CHECK(all->get().value == doctest::Approx(1.7567205150269727).epsilon(1e-6));
  auto ignoring = make_metric("Perplexity", {{"ignore_label", "0"}});
  ignoring->update({label}, {pred});
  CHECK(ignoring->get().value == doctest::Approx(1.1952286244286892).epsilon(1e-6));
  // Several workers' sums and counts give the perplexity of all their labels.
  CHECK(all->value_from(2 * all->sum_metric(), 2.0 * static_cast<double>(all->num_inst())) ==
        doctest::Approx(all->get().value));
  // p = 0 counts as 1e-10, not infinity.
  auto zero = make_metric("perplexity");
  zero->update({NDArray::from_vector<float>(Shape{1}, {0})}, {pred.slice(2, 3)});
  CHECK(zero->get().value == doctest::Approx(1e10).epsilon(1e-6));
  CHECK_THROWS_WITH_AS(all->update({NDArray::from_vector<float>(Shape{3}, {0, 1, 2})}, {pred}),
                       doctest::Contains("3 labels for 4 rows"), InputError);
}
