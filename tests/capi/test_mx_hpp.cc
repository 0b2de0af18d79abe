// mx.hpp, the header-only C++17 layer, built as a user builds it: C++17,
// linked with libmx.so only. Arrays, operators, autograd, symbols,
// executors, KVStores, iterators, files, and errors as mx::Error.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>

#include "mx/mx.hpp"
#include "temp_dir.h"

static_assert(__cplusplus == 201703L, "this test checks that mx.hpp is C++17");

TEST_CASE("mx.hpp: arrays and arithmetic") {
  mx::NDArray a = mx::NDArray::from_vector({1, 2, 3, 4}, {2, 2});
  mx::NDArray b = mx::NDArray::from_vector({10, 20, 30, 40}, {2, 2});
  CHECK(a.shape() == mx::Shape{2, 2});
  CHECK(a.size() == 4);
  CHECK(a.dtype() == mx::DType::float32);
  CHECK(a.context() == mx::Context::cpu());
  CHECK((a + b).to_vector() == std::vector<float>{11, 22, 33, 44});
  CHECK((b - a).to_vector() == std::vector<float>{9, 18, 27, 36});
  CHECK((a * b).to_vector() == std::vector<float>{10, 40, 90, 160});
  CHECK((b / a).to_vector() == std::vector<float>{10, 10, 10, 10});
  CHECK((a * 2.0f + 1.0f).to_vector() == std::vector<float>{3, 5, 7, 9});
  CHECK((10.0f - a).to_vector() == std::vector<float>{9, 8, 7, 6});
  CHECK((12.0f / a).to_vector() == std::vector<float>{12, 6, 4, 3});
  CHECK((-a).to_vector() == std::vector<float>{-1, -2, -3, -4});
  mx::NDArray shared = a;  // copies share the array
  mx::NDArray separate = a.copy();
  a += b;
  a *= 0.5f;
  CHECK(shared.to_vector() == std::vector<float>{5.5f, 11, 16.5f, 22});
  CHECK(separate.to_vector() == std::vector<float>{1, 2, 3, 4});
  CHECK(mx::NDArray::zeros({3}).to_vector() == std::vector<float>{0, 0, 0});
  auto d = mx::NDArray::from_vector(std::vector<double>{1.5, 2.5}, {2});
  CHECK(d.dtype() == mx::DType::float64);
  CHECK(d.to_vector<double>() == std::vector<double>{1.5, 2.5});
  CHECK_THROWS_WITH_AS(d.to_vector<float>(), "to_vector: the array's element type differs",
                       mx::Error);
  CHECK(b.slice(1, 2).to_vector() == std::vector<float>{30, 40});
  CHECK(b.reshape({4}).shape() == mx::Shape{4});
}

TEST_CASE("mx.hpp: any operator by name; errors carry the C API's message") {
  auto x = mx::NDArray::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  auto w = mx::NDArray::from_vector({1, 0, 0, 0, 1, 0}, {2, 3});
  auto b = mx::NDArray::from_vector({10, 20}, {2});
  auto y = mx::op("FullyConnected", {x, w, b}, {{"num_hidden", "2"}});
  CHECK(y.to_vector() == std::vector<float>{11, 22, 14, 25});
  auto parts = mx::op_outputs("SliceChannel", {x}, {{"num_outputs", "3"}, {"axis", "1"}});
  CHECK(parts.size() == 3);
  CHECK(parts[1].to_vector() == std::vector<float>{2, 5});
  CHECK_THROWS_WITH_AS(mx::op("FullyConnected", {x, w, b}, {{"num_hidden", "3"}}),
                       "MXImperativeInvoke: FullyConnected: input 'bias': shape (2,) conflicts "
                       "with (3,)",
                       mx::Error);
  CHECK_THROWS_WITH_AS(mx::op("Convolutoin", {x}),
                       "NNGetOpHandle: unknown operator 'Convolutoin' (did you mean "
                       "'Convolution'?)",
                       mx::Error);
}

TEST_CASE("mx.hpp: autograd") {
  auto x = mx::NDArray::from_vector({1, 2, 3}, {3});
  x.attach_grad();
  mx::NDArray y;
  {
    mx::autograd::record recording;
    CHECK(mx::autograd::is_recording());
    CHECK(mx::autograd::is_training());
    {
      mx::autograd::pause paused;
      CHECK(!mx::autograd::is_recording());
    }
    y = mx::op("sum", {x * x * 3.0f});
  }
  CHECK(!mx::autograd::is_recording());
  y.backward();
  CHECK(x.grad().to_vector() == std::vector<float>{6, 12, 18});
  // Accumulating gradients; a head gradient.
  x.attach_grad(mx::GradReq::add);
  mx::NDArray z;
  {
    mx::autograd::record recording;
    z = x * 2.0f;
  }
  z.backward(mx::NDArray::from_vector({1, 10, 100}, {3}), true);
  z.backward(mx::NDArray::from_vector({1, 1, 1}, {3}));
  CHECK(x.grad().to_vector() == std::vector<float>{4, 22, 202});
  CHECK_THROWS_AS(z.backward(), mx::Error);  // the graph was freed
  CHECK(mx::NDArray::from_vector({1}, {1}).grad().is_none());
  // Several heads.
  auto u = mx::NDArray::from_vector({2}, {1});
  u.attach_grad();
  mx::NDArray p, q;
  {
    mx::autograd::record recording;
    p = u * 3.0f;
    q = u * u;
  }
  mx::autograd::backward({p, q});
  CHECK(u.grad().to_vector() == std::vector<float>{7});
}

TEST_CASE("mx.hpp: symbols and executors") {
  auto data = mx::Symbol::variable("data");
  auto fc = mx::Symbol::op("FullyConnected", "fc", {data}, {{"num_hidden", "2"}});
  auto net = mx::Symbol::op("square", "sq", {fc});
  CHECK(net.list_arguments() == std::vector<std::string>{"data", "fc_weight", "fc_bias"});
  CHECK(net.list_outputs() == std::vector<std::string>{"sq_output"});
  auto shapes = net.infer_shape({{"data", {4, 3}}});
  CHECK(shapes.complete);
  CHECK(shapes.arguments[1] == mx::Shape{2, 3});
  CHECK(shapes.outputs[0] == mx::Shape{4, 2});
  auto again = mx::Symbol::from_json(net.to_json());
  CHECK(again.list_arguments() == net.list_arguments());
  auto yaml = mx::Symbol::from_yaml("layers:\n  - {op: FullyConnected, name: fc, num_hidden: 2}\n");
  CHECK(yaml.list_arguments() == std::vector<std::string>{"data", "fc_weight", "fc_bias"});

  auto x = mx::NDArray::from_vector({1, 0, 0, 0, 1, 0, 0, 0, 1, 1, 1, 1}, {4, 3});
  auto w = mx::NDArray::from_vector({1, 2, 3, 4, 5, 6}, {2, 3});
  auto b = mx::NDArray::zeros({2});
  auto gw = mx::NDArray::zeros({2, 3}), gb = mx::NDArray::zeros({2});
  mx::Executor exe(net, mx::Context::cpu(), {x, w, b}, {mx::NDArray(), gw, gb},
                   {mx::GradReq::null, mx::GradReq::write, mx::GradReq::write});
  exe.forward(true);
  CHECK(exe.outputs()[0].to_vector() == std::vector<float>{1, 16, 4, 25, 9, 36, 36, 225});
  exe.backward();
  // d sum(fc^2) / d bias = 2 * sum over the batch of fc.
  CHECK(gb.to_vector() == std::vector<float>{2 * (1 + 2 + 3 + 6), 2 * (4 + 5 + 6 + 15)});
  CHECK_THROWS_WITH_AS(mx::Executor(net, mx::Context::cpu(), {x, w}),
                       "MXExecutorBind: in_args: 2 arrays for 3 (data, fc_weight, fc_bias)",
                       mx::Error);
}

TEST_CASE("mx.hpp: KVStore, data iterator, files") {
  mx::KVStore kv("local");
  CHECK(kv.rank() == 0);
  CHECK(kv.num_workers() == 1);
  kv.init(0, mx::NDArray::from_vector({1, 2}, {2}));
  kv.set_optimizer("sgd", {{"learning_rate", "0.5"}});
  kv.push(0, {mx::NDArray::from_vector({1, 1}, {2}), mx::NDArray::from_vector({1, 1}, {2})});
  auto out = mx::NDArray::zeros({2});
  kv.pull(0, {out});
  CHECK(out.to_vector() == std::vector<float>{0, 1});
  kv.barrier();
  kv.close();

  mx::test::TempDir dir("mx_hpp");
  const std::string csv = dir.file("x.csv");
  std::ofstream(csv) << "1,2\n3,4\n";
  mx::DataIter it("CSVIter", {{"data_csv", csv}, {"data_shape", "(2,)"}, {"batch_size", "2"}});
  CHECK(it.next());
  CHECK(it.data().to_vector() == std::vector<float>{1, 2, 3, 4});
  CHECK(it.pad() == 0);
  CHECK(!it.next());
  it.reset();
  CHECK(it.next());
  CHECK_THROWS_AS(mx::DataIter("CSVIterr", {}), mx::Error);

  const std::string params = dir.file("a.params");
  mx::save(params, {{"arg:w", out}});
  auto loaded = mx::load(params);
  CHECK(loaded.at("arg:w").to_vector() == std::vector<float>{0, 1});
}
