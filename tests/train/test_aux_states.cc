// BatchNorm's moving statistics averaged over the devices of a process and
// the workers of a job (train/aux_states.h), without MPI: a coordinator that
// plays a second worker adds that worker's sums in its allreduce.
#include <doctest/doctest.h>

#include "executor/executor.h"
#include "kvstore/coordinator.h"
#include "train/aux_states.h"

using namespace mx;

namespace {

std::unique_ptr<Executor> bind_bn(Context ctx) {
  const graph::Symbol data = graph::Symbol::variable("data");
  const graph::Symbol net = graph::Symbol::create("BatchNorm", "bn", {}, {data});
  BindOptions options;
  options.ctx = ctx;
  return Executor::simple_bind(net, {{"data", Shape{4, 3}}}, options);
}

void set(Executor& e, const std::string& name, std::vector<float> values) {
  NDArray target = e.aux_dict().at(name);
  NDArray::from_vector<float>(Shape{3}, std::move(values)).copy_to(target);
}

std::vector<float> get(const Executor& e, const std::string& name) {
  return e.aux_dict().at(name).to_vector<float>();
}

// A second worker whose devices' moving means sum to `other_mean_sum`.
class TwoWorkers : public kvstore::Coordinator {
 public:
  explicit TwoWorkers(std::vector<double> other) : other_(std::move(other)) {}
  int rank() const override { return 0; }
  int num_workers() const override { return 2; }
  bool distributed() const override { return true; }
  int workers_per_update() const override { return 2; }
  kvstore::KVStore* kvstore() override { return nullptr; }
  void barrier() override {}
  void finish() override {}
  [[noreturn]] void fail(const std::exception&) override { throw; }
  std::vector<double> allreduce(std::vector<double> values, kvstore::Reduce op) override {
    REQUIRE(op == kvstore::Reduce::kSum);
    REQUIRE(values.size() == other_.size());
    for (size_t i = 0; i < values.size(); ++i) values[i] += other_[i];
    return values;
  }

 private:
  std::vector<double> other_;
};

}  // namespace

TEST_CASE("moving statistics become their mean over the devices of one process") {
  auto a = bind_bn(Context::cpu(0)), b = bind_bn(Context::cpu(1));
  set(*a, "bn_moving_mean", {1, 2, 3});
  set(*b, "bn_moving_mean", {3, 4, 7});
  set(*a, "bn_moving_var", {1, 1, 1});
  set(*b, "bn_moving_var", {3, 5, 1});
  auto one = kvstore::single_process();
  train::average_aux_states({a.get(), b.get()}, *one);
  for (const Executor* e : {a.get(), b.get()}) {
    CHECK(get(*e, "bn_moving_mean") == std::vector<float>{2, 3, 5});
    CHECK(get(*e, "bn_moving_var") == std::vector<float>{2, 3, 1});
  }
}

TEST_CASE("moving statistics become their mean over the workers' devices") {
  auto a = bind_bn(Context::cpu(0)), b = bind_bn(Context::cpu(1));
  set(*a, "bn_moving_mean", {1, 2, 3});
  set(*b, "bn_moving_mean", {3, 2, 1});
  set(*a, "bn_moving_var", {1, 1, 1});
  set(*b, "bn_moving_var", {1, 1, 1});
  // aux_dict is ordered by name: moving_mean, then moving_var.
  TwoWorkers kv({4, 0, 8, 6, 6, 6});
  train::average_aux_states({a.get(), b.get()}, kv);
  for (const Executor* e : {a.get(), b.get()}) {
    CHECK(get(*e, "bn_moving_mean") == std::vector<float>{2, 1, 3});
    CHECK(get(*e, "bn_moving_var") == std::vector<float>{2, 2, 2});
  }
}

TEST_CASE("one device of one process keeps its statistics; copies reach the other devices") {
  auto a = bind_bn(Context::cpu(0)), b = bind_bn(Context::cpu(1));
  set(*a, "bn_moving_mean", {1, 2, 3});
  train::average_aux_states({a.get()}, *kvstore::single_process());
  CHECK(get(*a, "bn_moving_mean") == std::vector<float>{1, 2, 3});
  train::copy_aux_states({a.get(), b.get()});
  CHECK(get(*b, "bn_moving_mean") == std::vector<float>{1, 2, 3});
}
