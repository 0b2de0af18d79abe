#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "base/error.h"
#include "ndarray/ndarray.h"
#include "storage/storage.h"

using namespace mx;

TEST_CASE("NDArray: creation, fill and reading back") {
  NDArray a = NDArray::full({2, 3}, 1.5);
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.size() == 6);
  CHECK(a.dtype() == DType::kFloat32);
  CHECK(a.ctx() == Context::cpu());
  CHECK(a.to_vector<float>() == std::vector<float>(6, 1.5f));
  NDArray z = NDArray::zeros({4}, Context::cpu(), DType::kInt64);
  CHECK(z.to_vector<int64_t>() == std::vector<int64_t>(4, 0));
  CHECK_THROWS_AS(z.to_vector<float>(), Error);  // wrong dtype
  NDArray none;
  CHECK(none.is_none());
  CHECK(none.size() == 0);
  CHECK_THROWS_AS(none.slice(0, 1), Error);
  CHECK_THROWS_AS(NDArray(Shape{2, -1}), Error);
}

TEST_CASE("NDArray: element-wise and scalar arithmetic for every dtype") {
  NDArray a = NDArray::from_vector<float>({4}, {1, 2, 3, 4});
  NDArray b = NDArray::from_vector<float>({4}, {10, 20, 30, 40});
  CHECK((a + b).to_vector<float>() == std::vector<float>{11, 22, 33, 44});
  CHECK((b - a).to_vector<float>() == std::vector<float>{9, 18, 27, 36});
  CHECK((a * b).to_vector<float>() == std::vector<float>{10, 40, 90, 160});
  CHECK((b / a).to_vector<float>() == std::vector<float>{10, 10, 10, 10});
  CHECK((a + 1.0).to_vector<float>() == std::vector<float>{2, 3, 4, 5});
  CHECK((10.0 - a).to_vector<float>() == std::vector<float>{9, 8, 7, 6});
  CHECK((a * 2.0).to_vector<float>() == std::vector<float>{2, 4, 6, 8});
  CHECK((a / 2.0).to_vector<float>() == std::vector<float>{0.5, 1, 1.5, 2});
  CHECK((12.0 / a).to_vector<float>() == std::vector<float>{12, 6, 4, 3});
  CHECK((a - 1.0).to_vector<float>() == std::vector<float>{0, 1, 2, 3});

  NDArray i = NDArray::from_vector<int32_t>({3}, {7, -8, std::numeric_limits<int32_t>::min()});
  NDArray j = NDArray::from_vector<int32_t>({3}, {2, 0, -1});
  // Integer division truncates; x / 0 is 0 and INT_MIN / -1 wraps instead of trapping.
  CHECK((i / j).to_vector<int32_t>() ==
        std::vector<int32_t>{3, 0, std::numeric_limits<int32_t>::min()});
  NDArray u = NDArray::from_vector<uint8_t>({2}, {250, 3});
  CHECK((u + 10.0).to_vector<uint8_t>() == std::vector<uint8_t>{4, 13});  // wraps like uint8
  NDArray h = NDArray::from_vector<half_t>({2}, {half_t(1.5f), half_t(-2.0f)});
  auto hv = (h * 3.0).to_vector<half_t>();
  CHECK(static_cast<float>(hv[0]) == 4.5f);
  CHECK(static_cast<float>(hv[1]) == -6.0f);
  NDArray d = NDArray::from_vector<double>({1}, {0.1});
  CHECK((d + 0.2).scalar() == doctest::Approx(0.3).epsilon(1e-15));
  NDArray i8 = NDArray::from_vector<int8_t>({2}, {-128, 5});
  CHECK((i8 - 1.0).to_vector<int8_t>() == std::vector<int8_t>{127, 4});
  NDArray i64 = NDArray::from_vector<int64_t>({1}, {int64_t{1} << 40});
  CHECK((i64 * 2.0).to_vector<int64_t>()[0] == int64_t{1} << 41);
}

TEST_CASE("NDArray: in-place updates are ordered with reads") {
  NDArray acc = NDArray::zeros({1000});
  NDArray one = NDArray::full({1000}, 1.0);
  std::vector<NDArray> snapshots;
  for (int i = 0; i < 50; ++i) {
    acc += one;
    if (i % 10 == 9) snapshots.push_back(acc.copy());
  }
  acc *= 2.0;
  CHECK(acc.to_vector<float>() == std::vector<float>(1000, 100.0f));
  for (size_t k = 0; k < snapshots.size(); ++k)
    CHECK(snapshots[k].to_vector<float>()[999] == static_cast<float>(10 * (k + 1)));
}

TEST_CASE("NDArray: mismatched operands give clear errors") {
  NDArray a = NDArray::zeros({2, 3});
  NDArray b = NDArray::zeros({3, 2});
  CHECK_THROWS_WITH_AS(
      a + b, "elemwise_add: operands differ: float32 (2, 3) on cpu:0 and float32 (3, 2) on cpu:0",
      Error);
  NDArray c = NDArray::zeros({2, 3}, Context::cpu(), DType::kFloat64);
  CHECK_THROWS_AS(a * c, Error);
}

TEST_CASE("NDArray: slices and reshapes are views that share memory") {
  NDArray a = NDArray::from_vector<float>({3, 2}, {0, 1, 2, 3, 4, 5});
  NDArray row1 = a.slice(1, 2);
  CHECK(row1.shape() == Shape{1, 2});
  CHECK(row1.shares_memory_with(a));
  CHECK(row1.to_vector<float>() == std::vector<float>{2, 3});
  NDArray last = a.at(2);
  CHECK(last.shape() == Shape{2});
  CHECK(last.to_vector<float>() == std::vector<float>{4, 5});
  row1 += 10.0;  // writes through to a
  CHECK(a.to_vector<float>() == std::vector<float>{0, 1, 12, 13, 4, 5});
  NDArray flat = a.reshape({-1});
  CHECK(flat.shape() == Shape{6});
  NDArray r = a.reshape({2, -1});
  CHECK(r.shape() == Shape{2, 3});
  r.fill(7.0);
  CHECK(a.to_vector<float>() == std::vector<float>(6, 7.0f));
  CHECK(a.slice(0, 0).size() == 0);
  CHECK_THROWS_AS(a.slice(2, 4), Error);
  CHECK_THROWS_AS(a.slice(-1, 1), Error);
  CHECK_THROWS_AS(a.reshape({4, -1}), Error);
  CHECK_THROWS_AS(a.reshape({-1, -1}), Error);
  CHECK_THROWS_AS(a.reshape({7}), Error);
}

TEST_CASE("NDArray: copies are deep and ordered") {
  NDArray a = NDArray::from_vector<int32_t>({3}, {1, 2, 3});
  NDArray b = a.copy();
  a += NDArray::from_vector<int32_t>({3}, {1, 1, 1});
  CHECK(b.to_vector<int32_t>() == std::vector<int32_t>{1, 2, 3});
  CHECK(a.to_vector<int32_t>() == std::vector<int32_t>{2, 3, 4});
  NDArray dst = NDArray::zeros({3}, Context::cpu(), DType::kInt32);
  a.copy_to(dst);
  CHECK(dst.to_vector<int32_t>() == std::vector<int32_t>{2, 3, 4});
  NDArray wrong = NDArray::zeros({4}, Context::cpu(), DType::kInt32);
  CHECK_THROWS_AS(a.copy_to(wrong), Error);
}

TEST_CASE("NDArray: memory returns to the pool once pending operations finish") {
  auto pool = storage_pool(Context::cpu());
  Engine::get().wait_all();
  const int64_t before = pool->stats().live_bytes;
  {
    NDArray big = NDArray::full({1 << 16}, 3.0);
    NDArray sum = big + big;
    CHECK(pool->stats().live_bytes >= before + 2 * (1 << 18));
  }  // dropped while possibly still pending: freed by the engine afterwards
  Engine::get().wait_all();
  CHECK(pool->stats().live_bytes == before);
}

TEST_CASE("NDArray: a failed operation is reported when its result is read") {
  NDArray a = NDArray::zeros({2});
  Engine::get().push([](RunContext) { throw Error("kernel failed"); }, Context::cpu(), {},
                     {a.var()}, FnProperty::kNormal, 0, "broken kernel");
  NDArray b = a + 1.0;  // depends on the failed value
  CHECK_THROWS_WITH_AS(b.to_vector<float>(), "in operation 'broken kernel': kernel failed", Error);
  CHECK_NOTHROW(Engine::get().wait_all());
  a.fill(1.0);  // a good write makes `a` usable again
  CHECK((a + 1.0).to_vector<float>() == std::vector<float>{2, 2});
}
