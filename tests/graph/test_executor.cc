#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <mutex>
#include <random>

#include "base/error.h"
#include "executor/executor.h"
#include "op/registry.h"
#include "storage/storage.h"

using namespace mx;
using namespace mx::graph;

namespace {

Symbol var(const std::string& name) { return Symbol::variable(name); }
Symbol fc(const Symbol& x, const std::string& name, int hidden) {
  return Symbol::create("FullyConnected", name, {{"num_hidden", std::to_string(hidden)}}, {x});
}
Symbol act(const Symbol& x, const std::string& name, const char* type) {
  return Symbol::create("Activation", name, {{"act_type", type}}, {x});
}

// An MLP with a residual add and a two-way branch: exercises summed gradients.
Symbol branchy_on(const Symbol& x) {
  Symbol h = act(fc(x, "fc1", 6), "a1", "tanh");
  Symbol left = act(fc(h, "fc2", 6), "a2", "sigmoid");
  Symbol right = Symbol::create("_mul_scalar", "scale", {{"scalar", "0.5"}}, {h});
  Symbol sum = Symbol::create("elemwise_add", "res", {}, {left, right});
  Symbol sq = Symbol::create("square", "sq", {}, {h});  // h feeds three consumers
  Symbol both = Symbol::create("elemwise_mul", "mul", {}, {sum, sq});
  return fc(both, "fc3", 3);
}
Symbol branchy_net() { return branchy_on(var("data")); }

void randomize(std::map<std::string, NDArray>& arrays, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  for (auto& [name, a] : arrays) {
    std::vector<double> v(static_cast<size_t>(a.size()));
    for (auto& x : v) x = u(rng);
    NDArray::from_vector<double>(a.shape(), v).copy_to(a);
  }
}

BindOptions float64_training() {
  BindOptions o;
  o.for_training = true;
  return o;
}

std::unique_ptr<Executor> bind64(const Symbol& s, const ShapeMap& shapes, BindOptions o) {
  for (const auto& name : s.list_arguments()) o.dtypes[name] = DType::kFloat64;
  return Executor::simple_bind(s, shapes, o);
}

double dot_with(const NDArray& a, const NDArray& w) {
  auto x = a.to_vector<double>(), y = w.to_vector<double>();
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

}  // namespace

TEST_CASE(
    "whole-network gradients match finite differences (branches, shared inputs, residual add)") {
  Symbol net = branchy_net();
  auto exe = bind64(net, {{"data", Shape{4, 5}}}, float64_training());
  auto args = exe->arg_dict();
  randomize(args, 1);
  NDArray head = NDArray::zeros({4, 3}, Context::cpu(), DType::kFloat64);
  std::map<std::string, NDArray> h{{"h", head}};
  randomize(h, 2);
  exe->forward(true);
  exe->backward({head});
  auto loss = [&] {
    exe->forward(true);
    return dot_with(exe->outputs()[0], head);
  };
  const double step = 1e-6;
  for (const auto& [name, a] : args) {
    CAPTURE(name);
    auto grad = exe->grad_dict().at(name).to_vector<double>();
    for (int64_t i = 0; i < std::min<int64_t>(a.size(), 12); ++i) {
      Engine::get().wait_all();
      double* p = a.data<double>();
      const double saved = p[i];
      p[i] = saved + step;
      double plus = loss();
      p[i] = saved - step;
      double minus = loss();
      p[i] = saved;
      double numeric = (plus - minus) / (2 * step);
      CHECK(grad[static_cast<size_t>(i)] == doctest::Approx(numeric).epsilon(1e-5).scale(1.0));
    }
  }
}

TEST_CASE("the planned executor gives bit-identical results to naive allocation") {
  Symbol net = branchy_net();
  BindOptions planned = float64_training();
  BindOptions naive = float64_training();
  naive.memory.inplace = false;
  naive.memory.coshare = false;
  auto a = bind64(net, {{"data", Shape{8, 5}}}, planned);
  auto b = bind64(net, {{"data", Shape{8, 5}}}, naive);
  auto args_a = a->arg_dict();
  randomize(args_a, 3);
  for (const auto& [name, arr] : args_a) arr.copy_to(const_cast<NDArray&>(b->arg_dict().at(name)));
  for (int iteration = 0; iteration < 3; ++iteration) {
    a->forward(true);
    a->backward();
    b->forward(true);
    b->backward();
  }
  CHECK(a->outputs()[0].to_vector<double>() == b->outputs()[0].to_vector<double>());
  for (const auto& [name, g] : a->grad_dict()) {
    CAPTURE(name);
    CHECK(g.to_vector<double>() == b->grad_dict().at(name).to_vector<double>());
  }
  CHECK(a->memory_report().planned_internal_bytes < b->memory_report().planned_internal_bytes);
  CHECK(a->memory_report().inplace_outputs > 0);
  CHECK(b->memory_report().inplace_outputs == 0);
}

TEST_CASE("gradients into one array from several consumers are added onto it, with no sum step") {
  // In branchy_net h feeds three consumers and fc1's output two; data feeds
  // fc1 and fc4 here. The gradients must be those of the two parts bound
  // apart, added (onto what grad_req add finds).
  Symbol x = var("data");
  Symbol left = branchy_on(x);
  Symbol right = fc(x, "fc4", 3);
  Symbol net = Symbol::create("elemwise_add", "out", {}, {left, right});
  for (const std::string req : {"write", "add"}) {
    CAPTURE(req);
    BindOptions o = float64_training();
    o.default_grad_req = parse_grad_req(req);
    auto exe = bind64(net, {{"data", Shape{4, 5}}}, o);
    int sums = 0;
    for (const auto& step : exe->profile(1)) sums += step.node == "(gradient sum)" ? 1 : 0;
    CHECK(sums == 0);
    auto args = exe->arg_dict();
    randomize(args, 5);
    auto grads = exe->grad_dict();
    randomize(grads, 6);
    std::map<std::string, std::vector<double>> want;
    for (const auto& [name, g] : grads)
      want[name] =
          std::string(req) == "add" ? g.to_vector<double>() : std::vector<double>(g.size(), 0.0);
    for (const Symbol& part : {left, right}) {
      auto p = bind64(part, {{"data", Shape{4, 5}}}, float64_training());
      for (const auto& [name, a] : p->arg_dict()) args.at(name).copy_to(const_cast<NDArray&>(a));
      p->forward(true);
      p->backward();
      for (const auto& [name, g] : p->grad_dict()) {
        const auto v = g.to_vector<double>();
        for (size_t i = 0; i < v.size(); ++i) want[name][i] += v[i];
      }
    }
    exe->forward(true);
    exe->backward();
    for (const auto& [name, g] : exe->grad_dict()) {
      CAPTURE(name);
      const auto got = g.to_vector<double>();
      for (size_t i = 0; i < got.size(); ++i)
        CHECK(got[i] == doctest::Approx(want[name][i]).epsilon(1e-12));
    }
  }
  // One step that reads an array twice gets two arrays for its gradients
  // (summed after), not one array as two of its outputs.
  auto sq = bind64(Symbol::create("elemwise_mul", "xx", {}, {x, x}), {{"data", Shape{3}}},
                   float64_training());
  NDArray::from_vector<double>(Shape{3}, {1.5, -2, 0.25})
      .copy_to(const_cast<NDArray&>(sq->arg_dict().at("data")));
  sq->forward(true);
  sq->backward({NDArray::from_vector<double>(Shape{3}, {1, 2, 3})});
  CHECK(sq->grad_dict().at("data").to_vector<double>() == std::vector<double>{3, -8, 1.5});
}

TEST_CASE("grad_req write, add and null") {
  Symbol net = fc(var("data"), "fc", 2);
  BindOptions o = float64_training();
  o.grad_req = {{"data", GradReq::kNull}, {"fc_bias", GradReq::kAdd}};
  auto exe = bind64(net, {{"data", Shape{3, 4}}}, o);
  CHECK(exe->grad_dict().count("data") == 0);
  auto args = exe->arg_dict();
  randomize(args, 4);
  exe->forward(true);
  exe->backward();
  auto once_w = exe->grad_dict().at("fc_weight").to_vector<double>();
  auto once_b = exe->grad_dict().at("fc_bias").to_vector<double>();
  exe->forward(true);
  exe->backward();
  CHECK(exe->grad_dict().at("fc_weight").to_vector<double>() == once_w);  // write
  auto twice_b = exe->grad_dict().at("fc_bias").to_vector<double>();
  for (size_t i = 0; i < once_b.size(); ++i)
    CHECK(twice_b[i] == doctest::Approx(2 * once_b[i]));  // add
  CHECK(once_b[0] == doctest::Approx(3.0));  // head gradient of ones summed over the batch
}

TEST_CASE("mirroring recomputes cheap nodes: same gradients, less memory") {
  // A deep chain of cheap activations between fully connected layers.
  Symbol x = var("data");
  for (int i = 0; i < 6; ++i) {
    x = fc(x, "fc" + std::to_string(i), 64);
    x = act(x, "tanh" + std::to_string(i), "tanh");
    x = Symbol::create("_mul_scalar", "s" + std::to_string(i), {{"scalar", "1.1"}}, {x});
    x = act(x, "sig" + std::to_string(i), "sigmoid");
  }
  BindOptions plain = float64_training();
  BindOptions mirrored = float64_training();
  mirrored.mirror = MirrorPolicy::kCheap;
  auto a = bind64(x, {{"data", Shape{32, 16}}}, plain);
  auto b = bind64(x, {{"data", Shape{32, 16}}}, mirrored);
  auto args = a->arg_dict();
  randomize(args, 5);
  for (const auto& [name, arr] : args) arr.copy_to(const_cast<NDArray&>(b->arg_dict().at(name)));
  a->forward(true);
  a->backward();
  b->forward(true);
  b->backward();
  for (const auto& [name, g] : a->grad_dict()) {
    CAPTURE(name);
    CHECK(g.to_vector<double>() == b->grad_dict().at(name).to_vector<double>());
  }
  CHECK(b->memory_report().recompute_steps > 0);
  CHECK(b->memory_report().planned_internal_bytes < a->memory_report().planned_internal_bytes);
  // Exactly the cheap nodes are recomputed: each of the 18 activations and
  // scalings once, never a FullyConnected (whose backward needs only its
  // inputs, which are those cheap outputs).
  CHECK(b->memory_report().recompute_steps == 18);
  BindOptions all = float64_training();
  all.mirror = MirrorPolicy::kAll;
  CHECK(Executor::plan_only(x, {{"data", Shape{32, 16}}}, all).recompute_steps > 18);
  // A loss operator is never recomputed, even when everything else may be:
  // of relu -> SoftmaxOutput only the relu is (its backward reads its output).
  Symbol loss = Symbol::create("SoftmaxOutput", "softmax", {},
                               {act(var("data"), "relu", "relu"), var("label")});
  CHECK(Executor::plan_only(loss, {{"data", Shape{4, 5}}, {"label", Shape{4}}}, all)
            .recompute_steps == 1);
}

TEST_CASE("plan_only plans what a bind of the same options plans") {
  Symbol net = branchy_net();
  for (MirrorPolicy mirror : {MirrorPolicy::kNone, MirrorPolicy::kCheap}) {
    CAPTURE(static_cast<int>(mirror));
    BindOptions o = float64_training();
    o.mirror = mirror;
    for (const auto& name : net.list_arguments()) o.dtypes[name] = DType::kFloat64;
    const MemoryReport planned = Executor::plan_only(net, {{"data", Shape{8, 5}}}, o);
    const MemoryReport bound = bind64(net, {{"data", Shape{8, 5}}}, o)->memory_report();
    CHECK(planned.planned_internal_bytes == bound.planned_internal_bytes);
    CHECK(planned.num_blocks == bound.num_blocks);
    CHECK(planned.num_entries == bound.num_entries);
    CHECK(planned.inplace_outputs == bound.inplace_outputs);
    CHECK(planned.recompute_steps == bound.recompute_steps);
    CHECK(planned.argument_bytes == bound.argument_bytes);
    CHECK(planned.gradient_bytes == bound.gradient_bytes);
  }
}

TEST_CASE("inference binds carry no backward and plan much less memory") {
  Symbol net = branchy_net();
  BindOptions train = float64_training();
  BindOptions infer;
  infer.for_training = false;
  auto t = Executor::plan_only(net, {{"data", Shape{64, 5}}}, train);
  auto i = Executor::plan_only(net, {{"data", Shape{64, 5}}}, infer);
  CHECK(i.planned_internal_bytes * 2 < t.planned_internal_bytes);
  auto exe = Executor::simple_bind(net, {{"data", Shape{2, 5}}}, infer);
  exe->forward(false);
  CHECK(exe->outputs()[0].shape() == Shape{2, 3});
  CHECK_THROWS_AS(exe->backward(), Error);
}

TEST_CASE("outputs nobody reads give their blocks back at once, whatever their slot") {
  // split(data) into three; only part 0 goes on, through two scalings. Parts
  // 1 and 2 die as they are made, so the first scaling reuses one of their
  // blocks and the second another: three blocks in all, not four.
  Symbol parts = Symbol::create("SliceChannel", "split", {{"num_outputs", "3"}}, {var("data")});
  Symbol x = Symbol::create("_mul_scalar", "s1", {{"scalar", "2"}}, {parts[0]});
  x = Symbol::create("_mul_scalar", "s2", {{"scalar", "3"}}, {x});
  BindOptions infer;
  infer.for_training = false;
  infer.memory.inplace = false;
  const MemoryReport r = Executor::plan_only(x, {{"data", Shape{4, 6}}}, infer);
  CHECK(r.num_blocks == 3);
  CHECK(r.planned_internal_bytes == 3 * 4 * 2 * sizeof(float));
}

TEST_CASE("a two-input operator writes in place over an input it reads last") {
  // add(data * 2, data * 3): the sum takes the block of its first input,
  // which nothing reads after it; the scalings read an argument (the
  // caller's array) and cannot.
  Symbol a = Symbol::create("_mul_scalar", "s1", {{"scalar", "2"}}, {var("data")});
  Symbol b = Symbol::create("_mul_scalar", "s2", {{"scalar", "3"}}, {var("data")});
  Symbol sum = Symbol::create("elemwise_add", "add", {}, {a, b});
  BindOptions infer;
  infer.for_training = false;
  CHECK(Executor::plan_only(sum, {{"data", Shape{4, 6}}}, infer).inplace_outputs == 1);
  // Reading the same input twice forbids it: add(x, x) with x = data * 2.
  Symbol twice = Symbol::create("elemwise_add", "add", {}, {a, a});
  CHECK(Executor::plan_only(twice, {{"data", Shape{4, 6}}}, infer).inplace_outputs == 0);
}

TEST_CASE("the monitor sees every intermediate output") {
  Symbol net = branchy_net();
  BindOptions infer;
  infer.for_training = false;
  auto exe = Executor::simple_bind(net, {{"data", Shape{2, 5}}}, infer);
  std::mutex m;
  std::vector<std::string> seen;
  exe->set_monitor([&](const std::string& name, const NDArray& value) {
    std::lock_guard<std::mutex> lock(m);
    seen.push_back(name + " " + value.shape().to_string());
  });
  exe->forward(false);
  Engine::get().wait_all();
  CHECK(seen.size() == 9);
  CHECK(std::find(seen.begin(), seen.end(), "fc3_output (2, 3)") != seen.end());
  CHECK(std::find(seen.begin(), seen.end(), "sq_output (2, 6)") != seen.end());
}

TEST_CASE("binding errors name the array and both shapes") {
  Symbol net = fc(var("data"), "fc", 2);
  std::map<std::string, NDArray> args{{"data", NDArray::zeros({3, 4})},
                                      {"fc_weight", NDArray::zeros({2, 5})},
                                      {"fc_bias", NDArray::zeros({2})}};
  BindOptions o;
  CHECK_THROWS_WITH_AS(
      Executor(net, args, {}, {}, o),
      "node 'fc' (FullyConnected): input 'weight': shape (2, 5) conflicts with (2, 4)", InputError);
  args.erase("fc_bias");
  CHECK_THROWS_WITH_AS(
      Executor(net, args, {}, {}, o),
      "bind: no array for argument 'fc_bias'; arguments are: data, fc_weight, fc_bias", InputError);
  CHECK_THROWS_AS(Executor::simple_bind(net, {}, o), InputError);
}

TEST_CASE("binding on a device without an operator's kernel fails at bind time, naming the node") {
  // An operator without a GPU kernel in this build (every one, without CUDA).
  std::string missing;
  for (const char* name : {"sigmoid", "tanh", "relu", "square", "exp", "abs", "negative"})
    if (!op::OpRegistry::get().find(name).has_kernel(DeviceKind::kGPU)) {
      missing = name;
      break;
    }
  if (missing.empty()) {
    MESSAGE("every candidate operator has a GPU kernel: nothing to fail");
    return;
  }
  Symbol net = Symbol::create(missing, "layer1", {}, {var("data")});
  std::map<std::string, NDArray> args{{"data", NDArray::zeros({2, 3})}};
  BindOptions o;
  o.ctx = Context::gpu(0);
  o.for_training = false;
  // Before any memory is allocated on the device (none may exist here).
  CHECK_THROWS_WITH_AS(Executor(net, args, {}, {}, o),
                       ("node 'layer1' (" + missing + ") has no kernel on gpu:0").c_str(),
                       InputError);
  o.for_training = true;
  std::map<std::string, NDArray> grads{{"data", NDArray::zeros({2, 3})}};
  CHECK_THROWS_AS(Executor(net, args, grads, {}, o), InputError);
}

TEST_CASE("measured memory matches the plan") {
  Symbol net = branchy_net();
  auto pool = storage_pool(Context::cpu());
  Engine::get().wait_all();
  const int64_t before = pool->stats().live_bytes;
  auto exe = Executor::simple_bind(net, {{"data", Shape{128, 5}}}, float64_training());
  Engine::get().wait_all();
  const auto report = exe->memory_report();
  // The pool's growth is exactly the planned blocks plus the bound arrays
  // (arguments, gradients, auxiliary states, the head gradient).
  int64_t arrays = 0;
  auto add = [&](const std::map<std::string, NDArray>& m) {
    for (const auto& [name, a] : m)
      arrays += static_cast<int64_t>(StoragePool::round_size(a.bytes()));
  };
  add(exe->arg_dict());
  add(exe->grad_dict());
  add(exe->aux_dict());
  arrays += static_cast<int64_t>(StoragePool::round_size(exe->outputs()[0].bytes()));
  CHECK(pool->stats().live_bytes - before ==
        static_cast<int64_t>(report.allocated_internal_bytes) + arrays);
  CHECK(report.allocated_internal_bytes >= report.planned_internal_bytes);
}

TEST_CASE("reshape to another batch size shares parameters and memory") {
  Symbol net = branchy_net();
  auto exe = bind64(net, {{"data", Shape{16, 5}}}, float64_training());
  auto args = exe->arg_dict();
  randomize(args, 9);
  exe->forward(true);
  auto small = exe->reshape({{"data", Shape{4, 5}}});
  CHECK(small->arg_dict().at("fc1_weight").shares_memory_with(exe->arg_dict().at("fc1_weight")));
  CHECK_FALSE(small->arg_dict().at("data").shares_memory_with(exe->arg_dict().at("data")));
  CHECK(small->memory_report().allocated_internal_bytes == 0);  // every block reused
  // The first 4 rows give the same outputs as in the big batch.
  exe->arg_dict().at("data").slice(0, 4).copy_to(
      const_cast<NDArray&>(small->arg_dict().at("data")));
  small->forward(false);
  exe->forward(false);
  auto big_out = exe->outputs()[0].slice(0, 4).copy().to_vector<double>();
  CHECK(small->outputs()[0].to_vector<double>() == big_out);
  auto bigger = exe->reshape({{"data", Shape{64, 5}}});
  CHECK(bigger->memory_report().allocated_internal_bytes > 0);
  bigger->forward(true);
  bigger->backward();
  CHECK(bigger->outputs()[0].shape() == Shape{64, 3});
}
