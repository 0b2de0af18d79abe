// Autograd (lib/autograd): recorded imperative calls differentiated by the
// executor's gradient pass. Gradients against central finite differences in
// float64, and against the symbolic executor on the same networks and
// arrays; Dropout's recorded mask; BatchNorm in both modes; grad_req add,
// head gradients, retain_graph, per-thread recording and the errors.
#include <doctest/doctest.h>

#include <cmath>
#include <functional>
#include <random>
#include <thread>

#include "autograd/backward.h"
#include "autograd/mode.h"
#include "autograd/record.h"
#include "compare.h"
#include "error_text.h"
#include "executor/executor.h"

using namespace mx;
using autograd::Array;
using graph::GradReq;
using graph::Symbol;

namespace {

using Attrs = std::map<std::string, std::string>;

NDArray random_array(const Shape& shape, uint64_t seed, DType dtype = DType::kFloat64,
                     double scale = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-scale, scale);
  std::vector<double> v(static_cast<size_t>(shape.size()));
  for (auto& x : v) x = u(rng);
  NDArray a = NDArray::from_vector<double>(shape, v);
  if (dtype == DType::kFloat64) return a;
  NDArray out(shape, Context::cpu(), dtype);
  return op::invoke("Cast", {a}, {{"dtype", dtype_name(dtype)}})[0];
}

Array call(const std::string& op, const Attrs& attrs, const std::vector<Array>& inputs) {
  return autograd::invoke(op::OpInstance(op, attrs), inputs)[0];
}

// Marks `a` with a zero gradient buffer and returns the buffer.
NDArray mark(Array& a, GradReq req = GradReq::kWrite) {
  NDArray grad = NDArray::zeros(a.value.shape(), a.value.ctx(), a.value.dtype());
  autograd::mark_variables({&a}, {grad}, {req});
  return grad;
}

std::vector<double> values(const NDArray& a) {
  if (a.dtype() == DType::kFloat64) return a.to_vector<double>();
  auto f = a.to_vector<float>();
  return {f.begin(), f.end()};
}

double dot(const NDArray& a, const NDArray& b) {
  auto x = values(a), y = values(b);
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

// Central differences of loss() with respect to every element of `x`.
std::vector<double> numeric_gradient(NDArray x, const std::function<double()>& loss,
                                     double h = 1e-6) {
  std::vector<double> v = x.to_vector<double>(), g(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const double keep = v[i];
    v[i] = keep + h;
    NDArray::from_vector<double>(x.shape(), v).copy_to(x);
    const double up = loss();
    v[i] = keep - h;
    NDArray::from_vector<double>(x.shape(), v).copy_to(x);
    const double down = loss();
    v[i] = keep;
    g[i] = (up - down) / (2 * h);
  }
  NDArray::from_vector<double>(x.shape(), v).copy_to(x);
  return g;
}

double closeness(const NDArray& got, const std::vector<double>& want, double rtol, double atol) {
  return test::closeness(values(got), want, rtol, atol);
}

// Forward of a network on named arrays, written once for autograd and
// checked by finite differences with recording off.
using Net = std::function<Array(const std::map<std::string, Array>&)>;

// For every array named in `marked`: the autograd gradient of
// sum(net * head) against central differences.
void check_against_finite_differences(const Net& net, std::map<std::string, Array> arrays,
                                      const std::vector<std::string>& marked, bool training) {
  std::map<std::string, NDArray> grads;
  for (const auto& name : marked) grads[name] = mark(arrays[name]);
  Array out;
  {
    autograd::RecordScope record(training);
    out = net(arrays);
  }
  NDArray head = random_array(out.value.shape(), 99);
  autograd::backward({out}, {{head}, false});
  const bool was_training = autograd::set_training(training);
  for (const auto& name : marked) {
    auto loss = [&] { return dot(net(arrays).value, head); };
    auto want = numeric_gradient(arrays[name].value, loss);
    INFO("gradient of ", name);
    CHECK(closeness(grads[name], want, 1e-5, 1e-7) <= 1);
  }
  autograd::set_training(was_training);
}

Net mlp(const std::string& act) {
  return [act](const std::map<std::string, Array>& a) {
    Array h = call("FullyConnected", {{"num_hidden", "5"}}, {a.at("x"), a.at("w1"), a.at("b1")});
    h = call("Activation", {{"act_type", act}}, {h});
    return call("FullyConnected", {{"num_hidden", "3"}}, {h, a.at("w2"), a.at("b2")});
  };
}

std::map<std::string, Array> mlp_arrays(DType dtype) {
  return {{"x", Array(random_array({4, 6}, 1, dtype))},
          {"w1", Array(random_array({5, 6}, 2, dtype))},
          {"b1", Array(random_array({5}, 3, dtype))},
          {"w2", Array(random_array({3, 5}, 4, dtype))},
          {"b2", Array(random_array({3}, 5, dtype))}};
}

// Convolution, BatchNorm, activation, pooling and a classifier.
Net conv_bn(const std::string& act, const std::string& pool) {
  return [act, pool](const std::map<std::string, Array>& a) {
    Array h = call("Convolution", {{"num_filter", "4"}, {"kernel", "(3, 3)"}, {"pad", "(1, 1)"}},
                   {a.at("x"), a.at("cw"), a.at("cb")});
    h = call("BatchNorm", {{"fix_gamma", "False"}},
             {h, a.at("gamma"), a.at("beta"), a.at("mean"), a.at("var")});
    h = call("Activation", {{"act_type", act}}, {h});
    h = call("Pooling", {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", pool}}, {h});
    h = call("Flatten", {}, {h});
    return call("FullyConnected", {{"num_hidden", "3"}}, {h, a.at("fw"), a.at("fb")});
  };
}

std::map<std::string, Array> conv_bn_arrays(DType dtype) {
  return {{"x", Array(random_array({2, 3, 6, 6}, 1, dtype))},
          {"cw", Array(random_array({4, 3, 3, 3}, 2, dtype))},
          {"cb", Array(random_array({4}, 3, dtype))},
          {"gamma", Array(random_array({4}, 4, dtype))},
          {"beta", Array(random_array({4}, 5, dtype))},
          {"mean", Array(random_array({4}, 6, dtype, 0.1))},
          {"var", Array(op::invoke("_plus_scalar", {random_array({4}, 7, dtype, 0.5)},
                                   {{"scalar", "1"}})[0])},
          {"fw", Array(random_array({3, 36}, 8, dtype))},
          {"fb", Array(random_array({3}, 9, dtype))}};
}

}  // namespace

TEST_CASE("autograd: MLP gradients match finite differences") {
  check_against_finite_differences(mlp("tanh"), mlp_arrays(DType::kFloat64),
                                   {"x", "w1", "b1", "w2", "b2"}, true);
}

TEST_CASE("autograd: Convolution + BatchNorm in training mode match finite differences") {
  // Batch statistics: the gradient flows through the batch mean and variance.
  check_against_finite_differences(conv_bn("tanh", "avg"), conv_bn_arrays(DType::kFloat64),
                                   {"x", "cw", "cb", "gamma", "beta", "fw", "fb"}, true);
}

TEST_CASE("autograd: BatchNorm recorded in inference mode uses the moving statistics") {
  // Each call's mode goes to its backward kernel: here BatchNorm is an affine
  // map of the moving statistics, which finite differences see too.
  check_against_finite_differences(conv_bn("sigmoid", "avg"), conv_bn_arrays(DType::kFloat64),
                                   {"x", "cw", "gamma", "beta"}, false);
}

namespace {

Symbol v(const std::string& name) { return Symbol::variable(name); }

// The MLP and the convolutional net as symbols on the same names, ending in
// SoftmaxOutput, and the same networks recorded.
Symbol mlp_symbol() {
  Symbol h = Symbol::create("FullyConnected", "fc1", {{"num_hidden", "5"}}, {v("x")},
                            {{"weight", v("w1")}, {"bias", v("b1")}});
  h = Symbol::create("Activation", "relu1", {{"act_type", "relu"}}, {h});
  h = Symbol::create("Dropout", "drop", {{"p", "0"}}, {h});
  h = Symbol::create("FullyConnected", "fc2", {{"num_hidden", "3"}}, {h},
                     {{"weight", v("w2")}, {"bias", v("b2")}});
  return Symbol::create("SoftmaxOutput", "softmax", {}, {h, v("label")});
}

Array mlp_with_loss(const std::map<std::string, Array>& a) {
  Array h = call("FullyConnected", {{"num_hidden", "5"}}, {a.at("x"), a.at("w1"), a.at("b1")});
  h = call("Activation", {{"act_type", "relu"}}, {h});
  h = call("Dropout", {{"p", "0"}}, {h});
  h = call("FullyConnected", {{"num_hidden", "3"}}, {h, a.at("w2"), a.at("b2")});
  return call("SoftmaxOutput", {}, {h, a.at("label")});
}

Symbol conv_bn_symbol() {
  Symbol h = Symbol::create("Convolution", "conv",
                            {{"num_filter", "4"}, {"kernel", "(3, 3)"}, {"pad", "(1, 1)"}},
                            {v("x")}, {{"weight", v("cw")}, {"bias", v("cb")}});
  h = Symbol::create("BatchNorm", "bn", {{"fix_gamma", "False"}}, {h},
                     {{"gamma", v("gamma")},
                      {"beta", v("beta")},
                      {"moving_mean", v("mean")},
                      {"moving_var", v("var")}});
  h = Symbol::create("Activation", "relu", {{"act_type", "relu"}}, {h});
  h = Symbol::create("Pooling", "pool",
                     {{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}}, {h});
  h = Symbol::create("Flatten", "flat", {}, {h});
  h = Symbol::create("FullyConnected", "fc", {{"num_hidden", "3"}}, {h},
                     {{"weight", v("fw")}, {"bias", v("fb")}});
  return Symbol::create("SoftmaxOutput", "softmax", {}, {h, v("label")});
}

Array conv_bn_with_loss(const std::map<std::string, Array>& a) {
  Array h = conv_bn("relu", "max")(a);
  return call("SoftmaxOutput", {}, {h, a.at("label")});
}

// Trains one step both ways on copies of the same float32 arrays: the
// autograd gradients and the updated auxiliary states equal the executor's.
void check_against_executor(const Symbol& symbol, const Net& net,
                            std::map<std::string, Array> arrays,
                            const std::vector<std::string>& aux_names) {
  const int64_t batch = arrays["x"].value.shape()[0];
  std::vector<float> labels;
  for (int64_t i = 0; i < batch; ++i) labels.push_back(static_cast<float>(i % 3));
  arrays["label"] = Array(NDArray::from_vector<float>({batch}, labels));
  std::map<std::string, NDArray> args, grads, aux, ag_grads;
  for (auto& [name, a] : arrays) {
    const bool is_aux = std::find(aux_names.begin(), aux_names.end(), name) != aux_names.end();
    (is_aux ? aux : args)[name] = a.value.copy();
    if (is_aux || name == "label") continue;
    grads[name] = NDArray::zeros(a.value.shape(), Context::cpu(), a.value.dtype());
    ag_grads[name] = mark(a);
  }
  Executor exe(symbol, args, grads, aux, BindOptions{});
  exe.forward(true);
  exe.backward();
  Array out;
  {
    autograd::RecordScope record;
    out = net(arrays);
  }
  autograd::backward({out}, {});
  CHECK(values(out.value) == values(exe.outputs()[0]));
  for (const auto& [name, g] : ag_grads) {
    INFO("gradient of ", name);
    CHECK(test::closeness(values(g), values(grads[name]), 1e-6, 1e-7) <= 1);
  }
  for (const auto& name : aux_names) {
    INFO("auxiliary state ", name);
    CHECK(values(arrays[name].value) == values(aux[name]));
  }
}

}  // namespace

TEST_CASE("autograd equals the executor: MLP with Dropout off") {
  auto arrays = mlp_arrays(DType::kFloat32);
  check_against_executor(mlp_symbol(), mlp_with_loss, arrays, {});
}

TEST_CASE("autograd equals the executor: Convolution + BatchNorm in training mode") {
  check_against_executor(conv_bn_symbol(), conv_bn_with_loss, conv_bn_arrays(DType::kFloat32),
                         {"mean", "var"});
}

TEST_CASE("autograd: Dropout's backward uses the mask its recorded forward drew") {
  Array x(op::invoke("_plus_scalar", {random_array({64, 32}, 3, DType::kFloat32)},
                     {{"scalar", "2"}})[0]);  // no zeros, so y / x is the mask
  NDArray grad = mark(x);
  Array y;
  {
    autograd::RecordScope record;
    y = call("Dropout", {{"p", "0.5"}}, {x});
  }
  autograd::backward({y}, {});
  auto xv = values(x.value), yv = values(y.value), g = values(grad);
  size_t dropped = 0;
  for (size_t i = 0; i < xv.size(); ++i) {
    dropped += yv[i] == 0 ? 1 : 0;
    REQUIRE(g[i] == doctest::Approx(yv[i] / xv[i]));
    REQUIRE((g[i] == 0 || g[i] == doctest::Approx(2.0)));
  }
  CHECK(dropped > 900);  // about half of 2048 dropped
  CHECK(dropped < 1150);
}

TEST_CASE("autograd: a variable read twice gets the sum; head gradients weight the heads") {
  Array x(NDArray::from_vector<double>({3}, {1, -2, 3}));
  NDArray grad = mark(x);
  Array y, z;
  {
    autograd::RecordScope record;
    y = call("elemwise_mul", {}, {x, x});  // x^2
    z = call("_mul_scalar", {{"scalar", "3"}}, {x});
  }
  NDArray gy = NDArray::from_vector<double>({3}, {1, 10, 100});
  autograd::backward({y, z}, {{gy, NDArray()}, false});  // none: ones
  CHECK(grad.to_vector<double>() == std::vector<double>{2 * 1 + 3, 10 * -4 + 3, 100 * 6 + 3});
}

TEST_CASE("autograd: grad_req add accumulates; retain_graph allows a second pass") {
  Array x(NDArray::from_vector<double>({2}, {1, 2}));
  NDArray grad = mark(x, GradReq::kAdd);
  Array y;
  {
    autograd::RecordScope record;
    y = call("square", {}, {x});
  }
  autograd::backward({y}, {{}, true});
  autograd::backward({y}, {{}, false});
  CHECK(grad.to_vector<double>() == std::vector<double>{4, 8});
  // The graph is gone now.
  CHECK(test::error_text([&] { autograd::backward({y}, {}); }) ==
        "the graph recorded for square was freed by an earlier backward pass; pass "
        "retain_graph to that pass to run backward through it again");
}

TEST_CASE("autograd: grad_req write overwrites, null leaves the buffer alone") {
  Array a(NDArray::from_vector<double>({2}, {1, 2})), b(NDArray::from_vector<double>({2}, {3, 4}));
  NDArray ga = NDArray::full({2}, 7.0, Context::cpu(), DType::kFloat64);
  NDArray gb = NDArray::full({2}, 7.0, Context::cpu(), DType::kFloat64);
  autograd::mark_variables({&a, &b}, {ga, gb}, {GradReq::kWrite, GradReq::kNull});
  Array y;
  {
    autograd::RecordScope record;
    y = call("elemwise_mul", {}, {a, b});
  }
  autograd::backward({y}, {});
  CHECK(ga.to_vector<double>() == std::vector<double>{3, 4});
  CHECK(gb.to_vector<double>() == std::vector<double>{7, 7});
}

TEST_CASE("autograd: gradients() returns new arrays and leaves the buffers") {
  Array x(NDArray::from_vector<double>({2}, {1, 2})), u(NDArray::from_vector<double>({1}, {5}));
  NDArray grad = mark(x);
  mark(u);
  Array y;
  {
    autograd::RecordScope record;
    y = call("_mul_scalar", {{"scalar", "4"}}, {x});
  }
  auto g = autograd::gradients({y}, {x, u}, {});
  CHECK(g[0].to_vector<double>() == std::vector<double>{4, 4});
  CHECK(g[1].to_vector<double>() == std::vector<double>{0});  // y does not depend on u
  CHECK(grad.to_vector<double>() == std::vector<double>{0, 0});
  CHECK(test::error_text([&] { autograd::gradients({y}, {y}, {}); }) ==
        "variable 0 is not a marked variable; gradients are taken with respect to marked "
        "variables only");
}

TEST_CASE("autograd: what is not recorded cannot be differentiated") {
  Array x(NDArray::from_vector<double>({2}, {1, 2}));
  mark(x);
  Array y = call("square", {}, {x});  // recording is off
  CHECK(!y.entry);
  CHECK(test::error_text([&] { autograd::backward({y}, {}); }) ==
        "head 0 is neither the result of a recorded operator call nor a marked variable: record "
        "the calls that make it (with recording on) from marked variables");
  // Inputs that need no gradient are not recorded either.
  autograd::RecordScope record;
  Array c(NDArray::from_vector<double>({2}, {1, 2}));
  CHECK(!call("square", {}, {c}).entry);
}

TEST_CASE("autograd: errors") {
  Array x(NDArray::from_vector<double>({2}, {1, 2}));
  NDArray wrong = NDArray::zeros({3}, Context::cpu(), DType::kFloat64);
  CHECK(test::error_text([&] { autograd::mark_variables({&x}, {wrong}, {GradReq::kWrite}); }) ==
        "variable 0: its gradient array is float64 (3,) on cpu:0, the variable is float64 (2,) on "
        "cpu:0");
  CHECK(test::error_text([&] { autograd::mark_variables({&x}, {}, {}); }) ==
        "1 variables, 0 gradient arrays and 0 requests: one of each per variable");
  mark(x);
  Array y;
  {
    autograd::RecordScope record;
    y = call("square", {}, {x});
    // Writing a marked variable while recording would change what was recorded.
    CHECK(test::error_text([&] {
            autograd::invoke(op::OpInstance("_mul_scalar", {{"scalar", "2"}}), {y}, {x});
          }) ==
          "_mul_scalar: output 0 is on the autograd tape (a marked variable or a recorded "
          "result); writing it while recording would change what the recorded graph read. "
          "Write a new array, or do this outside recording");
  }
  // Outside recording it is an ordinary in-place update, and x stays marked.
  auto updated = autograd::invoke(op::OpInstance("_mul_scalar", {{"scalar", "2"}}), {x}, {x});
  CHECK(updated[0].entry.node == x.entry.node);
  CHECK(x.value.to_vector<double>() == std::vector<double>{2, 4});
  CHECK(test::error_text([&] {
          autograd::invoke(op::OpInstance("square", {}), {x, x});
        }) == "square: 1 inputs expected (data), 2 given");
  CHECK(test::error_text([&] {
          autograd::invoke(op::OpInstance("square", {}), {x}, {Array(wrong)});
        }) == "square: output 0 is float64 (3,) on cpu:0, but the operator makes float64 (2,)");
  CHECK(test::error_text([&] {
          autograd::backward({y}, {{wrong, wrong}, false});
        }) == "2 head gradients for 1 heads: give one per head, or none for ones");
  CHECK(test::error_text([&] { autograd::backward({}, {}); }) == "no heads to differentiate");
}

TEST_CASE("autograd: recording and training are per thread") {
  autograd::RecordScope record(false);
  CHECK(autograd::is_recording());
  CHECK(!autograd::is_training());
  bool other_recording = true, other_training = true;
  std::thread t([&] {
    other_recording = autograd::is_recording();
    other_training = autograd::is_training();
  });
  t.join();
  CHECK(!other_recording);
  CHECK(!other_training);
  {
    autograd::RecordScope inner;
    CHECK(autograd::is_training());
  }
  CHECK(!autograd::is_training());
}
