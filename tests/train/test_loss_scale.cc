// train.loss_scale: the scale's bookkeeping (back-off, growth, the floor),
// the config's values and errors, the graph that scales the loss's gradient
// and the gradients' way back to the optimizer (divided, checked).
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "base/error.h"
#include "error_text.h"
#include "executor/executor.h"
#include "train/loss_scale_graph.h"
#include "train/loss_scaler.h"
#include "train/scaled_gradients.h"
#include "train/train_settings.h"

using namespace mx;
using namespace mx::train;
using Kind = LossScaleSettings::Kind;

namespace {

LossScaleSettings dynamic(double init, int64_t interval, double factor) {
  LossScaleSettings s;
  s.kind = Kind::kDynamic;
  s.init = init;
  s.growth_interval = interval;
  s.factor = factor;
  return s;
}

TrainSettings settings(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return parse_train_settings(Config::from_string(yaml, "cfg.yaml", overrides));
}

std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return test::error_text([&] { settings(yaml, overrides); });
}

}  // namespace

TEST_CASE("a dynamic scale backs off on overflow and grows after growth_interval good steps") {
  LossScaler s(dynamic(1024, 3, 2));
  CHECK(s.on());
  CHECK(s.dynamic());
  CHECK(s.scale() == 1024);
  CHECK_FALSE(s.after_backward(false, 1));  // skipped
  CHECK(s.scale() == 512);
  CHECK(s.skipped_steps() == 1);
  CHECK(s.after_backward(true, 2));
  CHECK(s.after_backward(true, 3));
  CHECK(s.scale() == 512);
  CHECK(s.after_backward(true, 4));  // the third good step in a row
  CHECK(s.scale() == 1024);
  CHECK(s.state().good_steps == 0);
  // An overflow resets the count of good steps.
  CHECK(s.after_backward(true, 5));
  CHECK(s.after_backward(true, 6));
  CHECK_FALSE(s.after_backward(false, 7));
  CHECK(s.scale() == 512);
  CHECK(s.state().good_steps == 0);
  CHECK(s.after_backward(true, 8));
  CHECK(s.after_backward(true, 9));
  CHECK(s.scale() == 512);
  CHECK(s.after_backward(true, 10));
  CHECK(s.scale() == 1024);
  CHECK(s.skipped_steps() == 2);
}

TEST_CASE("a dynamic scale does not grow past float32's largest value") {
  const double top = std::numeric_limits<float>::max();
  LossScaler s(dynamic(top, 1, 2));
  CHECK(s.after_backward(true, 1));
  CHECK(s.scale() == top);
}

TEST_CASE("a back-off below the floor ends the run naming the step") {
  LossScaler s(dynamic(kMinLossScale * 4, 2000, 2));
  CHECK_FALSE(s.after_backward(false, 1));
  CHECK_FALSE(s.after_backward(false, 2));
  CHECK(s.scale() == kMinLossScale);
  try {
    s.after_backward(false, 3);
    FAIL("no error at the floor");
  } catch (const InputError&) {
    FAIL("an InputError (exit 2) where a runtime error (exit 1) belongs");
  } catch (const Error& e) {
    CHECK(e.exit_code() == 1);
    CHECK(std::string(e.what()).find("step 3: the gradients are not finite") == 0);
  }
}

TEST_CASE("a static scale never changes and applies every step") {
  LossScaleSettings st;
  st.kind = Kind::kStatic;
  st.init = 1024;
  LossScaler s(st);
  CHECK(s.on());
  CHECK_FALSE(s.dynamic());
  CHECK(s.after_backward(false, 1));
  for (int i = 0; i < 5000; ++i) CHECK(s.after_backward(true, i + 2));
  CHECK(s.scale() == 1024);
  CHECK(s.skipped_steps() == 0);
  // A checkpoint's scale does not replace the configured one.
  s.restore({8, 3, 2});
  CHECK(s.scale() == 1024);
}

TEST_CASE("a restored dynamic scaler continues where the checkpoint was") {
  LossScaler s(dynamic(65536, 3, 2));
  s.restore({256, 2, 7});
  CHECK(s.scale() == 256);
  CHECK(s.skipped_steps() == 7);
  CHECK(s.after_backward(true, 10));  // the third good step
  CHECK(s.scale() == 512);
  CHECK_FALSE(LossScaler().on());
}

TEST_CASE("train.loss_scale: none, dynamic, a number or a mapping; defaults by precision") {
  CHECK(settings("train: {epochs: 1}\n").loss_scale.kind == Kind::kNone);
  CHECK(settings("train: {loss_scale: none}\n").loss_scale.kind == Kind::kNone);
  const LossScaleSettings d = settings("train: {loss_scale: dynamic}\n").loss_scale;
  CHECK(d.kind == Kind::kDynamic);
  CHECK(d.init == 65536);
  CHECK(d.growth_interval == 2000);
  CHECK(d.factor == 2);
  const LossScaleSettings st = settings("train: {loss_scale: 1024}\n").loss_scale;
  CHECK(st.kind == Kind::kStatic);
  CHECK(st.init == 1024);
  const LossScaleSettings m =
      settings("train:\n  loss_scale: {type: dynamic, init: 1e38, growth_interval: 7, factor: 4}\n")
          .loss_scale;
  CHECK(m.kind == Kind::kDynamic);
  CHECK(m.init == 1e38);
  CHECK(m.growth_interval == 7);
  CHECK(m.factor == 4);
  CHECK(settings("train:\n  loss_scale: {init: 128}\n").loss_scale.kind == Kind::kDynamic);
  // A single value on the command line replaces a mapping's type.
  CHECK(settings("train:\n  loss_scale: {type: dynamic, init: 128}\n", {"train.loss_scale=none"})
            .loss_scale.kind == Kind::kNone);
  CHECK(settings("train: {epochs: 1}\n", {"train.loss_scale=512"}).loss_scale.init == 512);
  // float16 scales dynamically unless told (the CPU refuses float16 itself,
  // so the default is read here directly).
  const Config c = Config::from_string("train: {epochs: 1}\n", "cfg.yaml");
  CHECK(parse_loss_scale(c, Precision::kFloat16, false).kind == Kind::kDynamic);
  CHECK(parse_loss_scale(c, Precision::kBFloat16, false).kind == Kind::kNone);
  const Config off = Config::from_string("train: {loss_scale: none}\n", "cfg.yaml");
  CHECK(parse_loss_scale(off, Precision::kFloat16, false).kind == Kind::kNone);
}

TEST_CASE("bad train.loss_scale values are config errors naming the file and the key") {
  CHECK(error_of("train:\n  loss_scale: 0\n") ==
        "cfg.yaml:2:15: train.loss_scale must be a positive finite number up to "
        "3.40282e+38 (float32's largest), not 0");
  CHECK(error_of("train:\n  loss_scale: -8\n")
            .find("cfg.yaml:2:15: train.loss_scale must be a "
                  "positive finite number") == 0);
  CHECK(error_of("train:\n  loss_scale: inf\n").find("must be a positive finite number") !=
        std::string::npos);
  CHECK(error_of("train:\n  loss_scale: nan\n").find("must be a positive finite number") !=
        std::string::npos);
  CHECK(error_of("train:\n  loss_scale: 1e39\n").find("float32's largest") != std::string::npos);
  CHECK(error_of("train:\n  loss_scale: big\n") ==
        "cfg.yaml:2:15: train.loss_scale must be none, dynamic, a positive number or a mapping "
        "{type: dynamic, init, growth_interval, factor}, not 'big'");
  CHECK(error_of("train:\n  loss_scale: {type: dynamic, init: 0}\n")
            .find("cfg.yaml:2:37: train.loss_scale.init must be a positive finite number") == 0);
  CHECK(error_of("train:\n  loss_scale: {type: dynamic, factor: 1}\n") ==
        "cfg.yaml:2:39: train.loss_scale.factor must be a finite number above 1 (the scale is "
        "divided and multiplied by it), not 1");
  CHECK(error_of("train:\n  loss_scale: {type: dynamic, growth_interval: 0}\n") ==
        "cfg.yaml:2:48: train.loss_scale.growth_interval must be at least 1 (good steps before "
        "the scale grows), not 0");
  CHECK(error_of("train:\n  loss_scale: {type: dynamic, window: 10}\n")
            .find("unknown key 'train.loss_scale.window'") != std::string::npos);
  CHECK(error_of("train:\n  loss_scale: {type: 64, factor: 4}\n") ==
        "cfg.yaml:2:34: train.loss_scale.factor applies to train.loss_scale type dynamic, not to "
        "a static scale (64)");
  CHECK(error_of("train: {epochs: 1}\n", {"train.loss_scale=-1"}) ==
        "command line: train.loss_scale=-1: train.loss_scale must be a positive finite number up "
        "to 3.40282e+38 (float32's largest), not -1");
  CHECK(error_of("kvstore: dist_sync\ntrain:\n  loss_scale: dynamic\n") ==
        "cfg.yaml:3:15: train.loss_scale dynamic is not available with a dist kvstore (the "
        "workers would have to agree on every skipped step); use train.loss_scale: none");
  CHECK(settings("kvstore: dist_async\n").loss_scale.kind == Kind::kNone);
}

namespace {

// FullyConnected into `loss` (SoftmaxOutput or a regression output).
graph::Symbol fc_into(const std::string& loss) {
  const graph::Symbol fc = graph::Symbol::create("FullyConnected", "fc", {{"num_hidden", "3"}},
                                                 {graph::Symbol::variable("data")});
  return graph::Symbol::create(loss, "out", {}, {fc});
}

std::unique_ptr<Executor> bind(const graph::Symbol& net, bool scaled) {
  BindOptions options;
  options.grad_req = {{"data", graph::GradReq::kNull}, {"out_label", graph::GradReq::kNull}};
  graph::ShapeMap shapes{{"data", Shape{4, 5}}};
  if (scaled) {
    options.grad_req[kLossScaleInput] = graph::GradReq::kNull;
    shapes[kLossScaleInput] = Shape{1};
  }
  auto e = Executor::simple_bind(scaled ? scale_loss_gradient(net) : net, shapes, options);
  std::vector<float> data(20), weight(15);
  for (size_t i = 0; i < data.size(); ++i) data[i] = std::sin(0.7f * static_cast<float>(i));
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = std::cos(1.3f * static_cast<float>(i));
  auto set = [&](const std::string& name, const std::vector<float>& v) {
    NDArray a = e->arg_dict().at(name);
    NDArray::from_vector<float>(a.shape(), v).copy_to(a);
  };
  set("data", data);
  set("fc_weight", weight);
  const size_t labels = static_cast<size_t>(e->arg_dict().at("out_label").size());
  std::vector<float> label(labels);
  for (size_t i = 0; i < labels; ++i) label[i] = static_cast<float>(i % 3);
  set("out_label", label);
  return e;
}

}  // namespace

TEST_CASE("the scaled graph's outputs are the network's and its gradients are scale times theirs") {
  for (const std::string loss : {"SoftmaxOutput", "LinearRegressionOutput",
                                 "LogisticRegressionOutput", "MAERegressionOutput"}) {
    CAPTURE(loss);
    const graph::Symbol net = fc_into(loss);
    auto plain = bind(net, false);
    auto scaled = bind(net, true);
    CHECK(net.list_arguments() ==
          std::vector<std::string>{"data", "fc_weight", "fc_bias", "out_label"});
    set_loss_scale_inputs({scaled.get()}, 1024);
    for (Executor* e : {plain.get(), scaled.get()}) {
      e->forward(true);
      e->backward();
    }
    CHECK(plain->outputs()[0].to_vector<float>() == scaled->outputs()[0].to_vector<float>());
    for (const std::string name : {"fc_weight", "fc_bias"}) {
      const auto a = plain->grad_dict().at(name).to_vector<float>();
      auto b = scaled->grad_dict().at(name).to_vector<float>();
      for (size_t i = 0; i < a.size(); ++i) CHECK(b[i] == a[i] * 1024);  // a power of two: exact
      // Divided again, they are the network's bit for bit.
      CHECK(gradients_finite({scaled.get()}, {name}));
      divide_gradients({scaled.get()}, {name}, 1024);
      CHECK(scaled->grad_dict().at(name).to_vector<float>() == a);
    }
  }
}

TEST_CASE("an output that is not a loss gets the scale as its head gradient") {
  const graph::Symbol net = graph::Symbol::create("FullyConnected", "fc", {{"num_hidden", "3"}},
                                                  {graph::Symbol::variable("data")});
  BindOptions options;
  options.grad_req = {{"data", graph::GradReq::kNull}, {kLossScaleInput, graph::GradReq::kNull}};
  auto e = Executor::simple_bind(scale_loss_gradient(net),
                                 {{"data", Shape{2, 2}}, {kLossScaleInput, Shape{1}}}, options);
  NDArray data = e->arg_dict().at("data");
  NDArray::from_vector<float>(Shape{2, 2}, {1, 2, 3, 4}).copy_to(data);
  set_loss_scale_inputs({e.get()}, 8);
  e->forward(true);
  e->backward();
  // d sum(fc) / d bias = the batch size, times the scale.
  CHECK(e->grad_dict().at("fc_bias").to_vector<float>() == std::vector<float>{16, 16, 16});
}

TEST_CASE(
    "divide_gradients divides in place; gradients_finite finds a value that is not finite on any "
    "device") {
  const graph::Symbol net = fc_into("SoftmaxOutput");
  auto a = bind(net, true);
  auto b = bind(net, true);
  auto fill = [](Executor& e, const std::string& name, float v) {
    NDArray g = e.grad_dict().at(name);
    NDArray::full(g.shape(), v, g.ctx()).copy_to(g);
  };
  const std::vector<std::string> params{"fc_weight", "fc_bias"};
  for (Executor* e : {a.get(), b.get()}) {
    fill(*e, "fc_weight", 6);
    fill(*e, "fc_bias", -2);
  }
  CHECK(gradients_finite({a.get(), b.get()}, params));
  divide_gradients({a.get(), b.get()}, params, 2);
  CHECK(b->grad_dict().at("fc_weight").to_vector<float>()[4] == 3);
  CHECK(a->grad_dict().at("fc_bias").to_vector<float>()[0] == -1);
  for (const float bad : {std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(), std::nanf("")}) {
    NDArray g = b->grad_dict().at("fc_bias");
    std::vector<float> v = g.to_vector<float>();
    v[1] = bad;
    NDArray::from_vector<float>(g.shape(), v).copy_to(g);
    CHECK_FALSE(gradients_finite({a.get(), b.get()}, params));
    CHECK(gradients_finite({a.get()}, params));  // only b's
    fill(*b, "fc_bias", 0);
    CHECK(gradients_finite({a.get(), b.get()}, params));
  }
  // Finite values whose sum overflows float32 are finite.
  fill(*a, "fc_weight", 3e38f);
  CHECK(gradients_finite({a.get(), b.get()}, params));
}
