// optimizer.clip_global_norm (train/gradient_clip.h): the batch's gradient,
// summed over the devices and rescaled, is scaled to the bound when longer,
// and left alone otherwise.
#include <doctest/doctest.h>

#include <cmath>

#include "executor/executor.h"
#include "train/gradient_clip.h"

using namespace mx;

namespace {

std::unique_ptr<Executor> bind_fc() {
  const graph::Symbol net = graph::Symbol::create("FullyConnected", "fc", {{"num_hidden", "2"}},
                                                  {graph::Symbol::variable("data")});
  BindOptions options;
  return Executor::simple_bind(net, {{"data", Shape{1, 2}}}, options);
}

void set_grad(Executor& e, const std::string& name, std::vector<float> values) {
  NDArray g = e.grad_dict().at(name);
  NDArray::from_vector<float>(g.shape(), std::move(values)).copy_to(g);
}

std::vector<float> grad(const Executor& e, const std::string& name) {
  return e.grad_dict().at(name).to_vector<float>();
}

}  // namespace

TEST_CASE("clip_global_norm scales a long gradient to the bound and keeps a short one") {
  auto e = bind_fc();
  set_grad(*e, "fc_weight", {3, 0, 0, 4});  // norm 5 with the bias's 0
  set_grad(*e, "fc_bias", {0, 0});
  // rescale 0.5: the optimizer sees norm 2.5; bound 1 -> factor 0.4.
  train::clip_global_norm({e.get()}, {"fc_weight", "fc_bias"}, 1.0, 0.5);
  const auto w = grad(*e, "fc_weight");
  CHECK(w[0] == doctest::Approx(1.2));
  CHECK(w[3] == doctest::Approx(1.6));
  // Now 0.5 * norm 2 = 1: within a bound of 3, unchanged.
  train::clip_global_norm({e.get()}, {"fc_weight", "fc_bias"}, 3.0, 0.5);
  CHECK(grad(*e, "fc_weight")[3] == doctest::Approx(1.6));
  // A zero gradient stays zero (no division by its norm).
  set_grad(*e, "fc_weight", {0, 0, 0, 0});
  train::clip_global_norm({e.get()}, {"fc_weight", "fc_bias"}, 1.0, 1.0);
  for (float x : grad(*e, "fc_weight")) CHECK(x == 0.0f);
}

TEST_CASE("clip_global_norm bounds the devices' summed gradient, scaling each device alike") {
  auto a = bind_fc(), b = bind_fc();
  set_grad(*a, "fc_weight", {1, 0, 0, 2});
  set_grad(*b, "fc_weight", {2, 0, 0, 2});  // sum (3, 0, 0, 4): norm 5
  set_grad(*a, "fc_bias", {0, 0});
  set_grad(*b, "fc_bias", {0, 0});
  train::clip_global_norm({a.get(), b.get()}, {"fc_weight", "fc_bias"}, 2.5, 1.0);
  CHECK(grad(*a, "fc_weight")[0] == doctest::Approx(0.5));
  CHECK(grad(*b, "fc_weight")[0] == doctest::Approx(1.0));
  CHECK(grad(*b, "fc_weight")[3] == doctest::Approx(1.0));
}
