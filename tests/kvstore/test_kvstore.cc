// KVStore semantics without MPI: the in-process stores, key placement, 2-bit
// compression against a reference written from the description of the
// format, the server's sync rounds and async updates, the optimizer's trip to
// the servers, and the start-up checks of a role map.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/bfloat16.h"
#include "base/error.h"
#include "base/half.h"
#include "error_text.h"
#include "kvstore/coordinator.h"
#include "kvstore/device_merge.h"
#include "kvstore/dist_coordinator.h"
#include "kvstore/gradient_compression.h"
#include "kvstore/kvstore_params.h"
#include "kvstore/local_kvstore.h"
#include "kvstore/message.h"
#include "kvstore/optimizer_spec.h"
#include "kvstore/packing.h"
#include "kvstore/partition.h"
#include "kvstore/push_encoding.h"
#include "kvstore/role_map.h"
#include "kvstore/server_store.h"
#include "temp_dir.h"

using namespace mx;
using namespace mx::kvstore;

namespace {

NDArray vec(std::vector<float> v) {
  const auto n = static_cast<int64_t>(v.size());
  return NDArray::from_vector(Shape{n}, std::move(v));
}

std::vector<float> values(const NDArray& a) { return a.to_vector<float>(); }

}  // namespace

TEST_CASE("local kvstore sums the devices' values, runs the updater and broadcasts") {
  for (const char* type : {"local", "device"}) {
    CAPTURE(type);
    auto kv = make_local_kvstore(type);
    CHECK(kv->type() == type);
    kv->init({3, 5}, {vec({1, 2, 3}), vec({10, 20})});

    // Without an updater the sum of the devices replaces the value.
    kv->push({3}, {{vec({1, 1, 1}), vec({2, 3, 4}), vec({0.5f, 0, 0})}});
    std::vector<NDArray> outs = {NDArray::zeros(Shape{3}), NDArray::zeros(Shape{3})};
    kv->pull({3}, {outs});
    CHECK(values(outs[0]) == std::vector<float>{3.5f, 4, 5});
    CHECK(values(outs[1]) == std::vector<float>{3.5f, 4, 5});

    // With SGD the summed gradient updates the stored weight.
    kv->set_optimizer(optim::make_optimizer("sgd", {{"learning_rate", "0.5"}}));
    kv->push({5}, {{vec({2, 4}), vec({2, 0})}}, -1);
    NDArray w = NDArray::zeros(Shape{2});
    kv->pull({5}, {{w}}, -1);
    CHECK(values(w) == std::vector<float>{8, 18});
    // pushpull: one more step.
    kv->pushpull({5}, {{vec({4, 4})}}, {{w}});
    CHECK(values(w) == std::vector<float>{6, 16});
  }
}

TEST_CASE("device merge: sums in device order, copies, and names what does not match") {
  // In float32 (1e8 + 1) - 1e8 is 0 and (1e8 - 1e8) + 1 is 1: the order shows.
  NDArray sum = NDArray::zeros(Shape{1});
  push_sum({vec({1e8f}), vec({1}), vec({-1e8f})}, sum, 0, "sum");
  CHECK(values(sum) == std::vector<float>{0});
  push_sum({vec({1e8f}), vec({-1e8f}), vec({1})}, sum, 0, "sum");
  CHECK(values(sum) == std::vector<float>{1});
  // One value is a copy; two are the whole sum; four go on adding.
  sum = NDArray::zeros(Shape{2});
  push_sum({vec({2, 3})}, sum, 0, "sum");
  CHECK(values(sum) == std::vector<float>{2, 3});
  push_sum({vec({2, 3}), vec({10, 20})}, sum, 0, "sum");
  CHECK(values(sum) == std::vector<float>{12, 23});
  push_sum({vec({1, 1}), vec({2, 2}), vec({3, 3}), vec({4, 4})}, sum, 0, "sum");
  CHECK(values(sum) == std::vector<float>{10, 10});
  // The destination may be the first value (summed in place), in float64 too.
  NDArray first = NDArray::from_vector(Shape{2}, std::vector<double>{0.5, 1.5});
  push_sum({first, NDArray::from_vector(Shape{2}, std::vector<double>{1, 2}),
            NDArray::from_vector(Shape{2}, std::vector<double>{4, 8})},
           first, 0, "sum");
  CHECK(first.to_vector<double>() == std::vector<double>{5.5, 11.5});
  NDArray alone = vec({7, 8});
  push_sum({alone}, alone, 0, "sum");
  CHECK(values(alone) == std::vector<float>{7, 8});
  CHECK_THROWS_WITH_AS(push_sum({}, sum, 0, "sum"), doctest::Contains("!values.empty()"), Error);

  NDArray copy = NDArray::zeros(Shape{3});
  push_copy(vec({4, 5, 6}), copy, 0, "copy");
  CHECK(values(copy) == std::vector<float>{4, 5, 6});

  check_arrays(4, {vec({1, 2}), vec({3, 4})}, Shape{2}, DType::kFloat32, "pushed");
  CHECK_THROWS_WITH_AS(check_arrays(4, {}, Shape{2}, DType::kFloat32, "pushed"),
                       "kvstore: key 4: no pushed arrays given", InputError);
  CHECK_THROWS_WITH_AS(
      check_arrays(4, {vec({1, 2}), NDArray()}, Shape{2}, DType::kFloat32, "output"),
      "kvstore: key 4: output array none does not match the key's float32 (2,)", InputError);
  CHECK_THROWS_WITH_AS(check_arrays(9, {vec({1, 2, 3})}, Shape{2}, DType::kFloat32, "pushed"),
                       doctest::Contains("kvstore: key 9: pushed array"), InputError);
  CHECK_THROWS_AS(check_arrays(9, {NDArray::zeros(Shape{2}, Context::cpu(), DType::kFloat64)},
                               Shape{2}, DType::kFloat32, "pushed"),
                  InputError);
}

TEST_CASE("local kvstore rejects what it cannot hold") {
  LocalKVStore kv;
  kv.init({0}, {vec({1, 2})});
  CHECK_THROWS_AS(kv.init({0}, {vec({1})}), InputError);
  CHECK_THROWS_AS(kv.push({1}, {{vec({1, 2})}}), InputError);  // not initialized
  CHECK_THROWS_AS(kv.push({0}, {{vec({1, 2, 3})}}), InputError);
  CHECK_THROWS_AS(kv.pull({0}, {{}}), InputError);
  CHECK_THROWS_AS(kv.init({2}, {NDArray::zeros(Shape{2}, Context::cpu(), DType::kInt32)}),
                  InputError);
  CHECK_THROWS_AS(kv.set_gradient_compression({"2bit", 0.5f}), InputError);
  CHECK_THROWS_AS(kv.set_gradient_compression({"1bit", 0.5f}), InputError);
  CHECK_NOTHROW(kv.set_gradient_compression({"none", 0.5f}));
  CHECK_THROWS_AS(make_local_kvstore("dist_sync"), InputError);
}

TEST_CASE("local kvstore: its messages, and optimizer states saved and loaded") {
  LocalKVStore kv;
  kv.init({0}, {vec({1, 2})});
  const std::string wrong_type = test::error_text<InputError>(
      [&] { kv.init({2}, {NDArray::zeros(Shape{2}, Context::cpu(), DType::kInt32)}); });
  CHECK(wrong_type.rfind("kvstore init: key 2 is ", 0) == 0);
  const std::string holds = "; the kvstore holds float32 or float64 arrays";
  REQUIRE(wrong_type.size() > holds.size());
  CHECK(wrong_type.compare(wrong_type.size() - holds.size(), holds.size(), holds) == 0);
  CHECK(test::error_text<InputError>([&] {
          kv.push({0}, {{vec({1, 2})}, {vec({1, 2})}});
        }) == "kvstore push: 1 keys but 2 value lists");
  CHECK(test::error_text<InputError>([&] {
          kv.pull({0}, {{vec({0, 0})}, {vec({0, 0})}});
        }) == "kvstore pull: 1 keys but 2 output lists");

  // Momentum states: saved after one step, loaded into a second store,
  // which then takes the same second step.
  const test::TempDir tmp("kvstore_states");
  const std::string path = tmp.file("opt.states");
  CHECK(test::error_text<Error>([&] { kv.save_optimizer_states(path); }) ==
        "kvstore: no optimizer to save the states of");
  CHECK(test::error_text<Error>([&] { kv.load_optimizer_states(path); }) ==
        "kvstore: set the optimizer before loading its states");
  auto sgd = [] {
    return optim::make_optimizer("sgd", {{"learning_rate", "0.5"}, {"momentum", "0.9"}});
  };
  kv.set_optimizer(sgd());
  kv.push({0}, {{vec({1, 1})}});
  kv.save_optimizer_states(path);
  NDArray after_one = NDArray::zeros(Shape{2});
  kv.pull({0}, {{after_one}});
  LocalKVStore resumed;
  resumed.init({0}, {after_one});
  resumed.set_optimizer(sgd());
  resumed.load_optimizer_states(path);
  kv.push({0}, {{vec({1, 1})}});
  resumed.push({0}, {{vec({1, 1})}});
  NDArray a = NDArray::zeros(Shape{2}), b = NDArray::zeros(Shape{2});
  kv.pull({0}, {{a}});
  resumed.pull({0}, {{b}});
  // Step 1: momentum -0.5, w = 0.5, 1.5; step 2: momentum -0.95, w = -0.45, 0.55.
  CHECK(values(a) == std::vector<float>{-0.45f, 0.55f});
  CHECK(values(b) == values(a));
}

TEST_CASE("keys go to servers by MXNet's rule; big arrays are split evenly") {
  CHECK(server_for_key(0, 3) == 0);
  CHECK(server_for_key(1, 3) == 9973 % 3);
  CHECK(server_for_key(7, 4) == (7 * 9973) % 4);
  auto whole = partition_key(5, 999999, 4, kDefaultBigArrayBound);
  REQUIRE(whole.size() == 1);
  CHECK(whole[0].server == (5 * 9973) % 4);
  CHECK(whole[0].count == 999999);

  // 10 elements over 3 servers: round(10/3)=3, round(20/3)=7.
  auto parts = partition_key(5, 10, 3, 10);
  REQUIRE(parts.size() == 3);
  CHECK(parts[0].server == 0);
  CHECK(parts[0].offset == 0);
  CHECK(parts[0].count == 3);
  CHECK(parts[1].offset == 3);
  CHECK(parts[1].count == 4);
  CHECK(parts[2].offset == 7);
  CHECK(parts[2].count == 3);
  // The default bound: 1,000,000 elements and more are split.
  CHECK(partition_key(1, 1000000, 2, kDefaultBigArrayBound).size() == 2);
  // Fewer elements than servers: the empty parts are left out.
  auto tiny = partition_key(1, 2, 4, 1);
  int64_t covered = 0;
  for (const auto& p : tiny) {
    CHECK(p.count > 0);
    CHECK(p.offset == covered);
    covered += p.count;
  }
  CHECK(covered == 2);
}

namespace {

// The reference: codes written bit by bit as the format describes them
// (element j of a 16-element block in byte j/4 of the word's memory, first
// element in the most significant pair; 11 = +t, 10 = -t).
void reference_quantize(const std::vector<float>& grad, std::vector<float>& residual,
                        std::vector<uint8_t>& bytes, float t) {
  const size_t n = grad.size();
  bytes.assign((n + 15) / 16 * 4, 0);
  for (size_t i = 0; i < n; ++i) {
    residual[i] += grad[i];
    unsigned code = 0;
    if (residual[i] >= t) {
      code = 3;
      residual[i] -= t;
    } else if (residual[i] <= -t) {
      code = 2;
      residual[i] += t;
    }
    const size_t byte = (i / 16) * 4 + (i % 16) / 4;
    const unsigned shift = 6 - 2 * static_cast<unsigned>(i % 4);
    bytes[byte] = static_cast<uint8_t>(bytes[byte] | (code << shift));
  }
}

}  // namespace

TEST_CASE("2-bit compression matches the reference, residuals included") {
  // A hand-made block: +, -, 0, + -> 11 10 00 11 = 0xe3 in the first byte.
  std::vector<float> grad = {1.0f, -1.0f, 0.1f, 0.6f};
  std::vector<float> residual(4, 0.0f);
  uint32_t word = 0xffffffff;
  quantize_2bit(grad.data(), residual.data(), &word, 4, 0.5f);
  uint8_t first = 0;
  std::memcpy(&first, &word, 1);
  CHECK(first == 0xe3);
  CHECK(residual == std::vector<float>{0.5f, -0.5f, 0.1f, 0.6f - 0.5f});
  std::vector<float> out(4);
  dequantize_2bit(&word, out.data(), 4, 0.5f);
  CHECK(out == std::vector<float>{0.5f, -0.5f, 0.0f, 0.5f});

  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.2f, 1.2f);
  for (int64_t n : {1, 15, 16, 17, 100, 1000}) {
    CAPTURE(n);
    std::vector<float> r_mine(static_cast<size_t>(n), 0.0f), r_ref = r_mine;
    for (int round = 0; round < 5; ++round) {
      std::vector<float> g(static_cast<size_t>(n));
      for (auto& x : g) x = dist(rng);
      std::vector<uint32_t> packed(static_cast<size_t>(compressed_words(n)));
      quantize_2bit(g.data(), r_mine.data(), packed.data(), n, 0.5f);
      std::vector<uint8_t> ref;
      reference_quantize(g, r_ref, ref, 0.5f);
      REQUIRE(ref.size() == packed.size() * 4);
      CHECK(std::memcmp(ref.data(), packed.data(), ref.size()) == 0);
      CHECK(r_mine == r_ref);
      std::vector<float> dq(static_cast<size_t>(n)), sum(static_cast<size_t>(n), 1.0f);
      dequantize_2bit(packed.data(), dq.data(), n, 0.5f);
      dequantize_2bit_add(packed.data(), sum.data(), n, 0.5f);
      for (size_t i = 0; i < dq.size(); ++i) {
        const unsigned code = (ref[(i / 16) * 4 + (i % 16) / 4] >> (6 - 2 * (i % 4))) & 3u;
        CHECK(dq[i] == (code == 3 ? 0.5f : code == 2 ? -0.5f : 0.0f));
        CHECK(sum[i] == 1.0f + dq[i]);
      }
    }
  }
}

namespace {

// Drives a ServerStore as the transport would: copies the payload into the
// buffer the store gives, then hands it the request.
struct ServerHarness {
  ServerStore store;
  std::vector<Response> out;
  int64_t next_id = 1;

  ServerHarness(int workers, bool sync) : store(workers, sync, 0, 1) {}

  Header header(MsgType type, int key, int64_t offset, int64_t count) {
    Header h;
    h.type = type;
    h.key = key;
    h.dtype = static_cast<int32_t>(DType::kFloat32);
    h.id = next_id++;
    h.offset = offset;
    h.count = count;
    return h;
  }
  void data(MsgType type, int worker, int key, const std::vector<float>& v, int64_t offset = 0) {
    Header h = header(type, key, offset, static_cast<int64_t>(v.size()));
    h.bytes = static_cast<int64_t>(v.size() * sizeof(float));
    std::memcpy(store.payload_buffer(h, worker), v.data(), static_cast<size_t>(h.bytes));
    store.handle(Request{h, worker, ""}, out);
  }
  void control(MsgType type, int worker, const std::string& text) {
    Header h = header(type, -1, 0, 0);
    h.bytes = static_cast<int64_t>(text.size());
    store.handle(Request{h, worker, text}, out);
  }
  // Pulls and returns the values of the reply (and reports the send done).
  std::vector<float> pull(int worker, int key, int64_t count, int64_t offset = 0) {
    out.clear();
    store.handle(Request{header(MsgType::kPull, key, offset, count), worker, ""}, out);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].header.type == MsgType::kReply);
    REQUIRE(out[0].reads_part);
    std::vector<float> v(static_cast<size_t>(count));
    std::memcpy(v.data(), out[0].data, v.size() * sizeof(float));
    const PartId part = out[0].reading;
    out.clear();
    store.sent(part, out);
    return v;
  }
};

std::string sgd_text(const char* lr) {
  auto opt = optim::make_optimizer("sgd", {{"learning_rate", lr}});
  return serialize_optimizer(*opt);
}

}  // namespace

TEST_CASE("sync server: replies held until every worker pushed, then one update") {
  ServerHarness s(3, true);
  s.data(MsgType::kInit, 0, 4, {1, 2});
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kReply);
  CHECK(s.pull(2, 4, 2) == std::vector<float>{1, 2});

  // Round without updater: the sum replaces the value.
  s.out.clear();
  s.data(MsgType::kPush, 1, 4, {10, 20});
  s.data(MsgType::kPush, 0, 4, {1, 1});
  CHECK(s.out.empty());
  CHECK(s.pull(0, 4, 2) == std::vector<float>{1, 2});  // still the old value
  s.data(MsgType::kPush, 2, 4, {100, 200});
  REQUIRE(s.out.size() == 3);
  for (const auto& r : s.out) CHECK(r.header.type == MsgType::kReply);
  CHECK(s.pull(0, 4, 2) == std::vector<float>{111, 221});

  // A second push of the same worker in one round is an error.
  s.out.clear();
  s.data(MsgType::kPush, 0, 4, {1, 1});
  s.data(MsgType::kPush, 0, 4, {1, 1});
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kError);
  s.out.clear();
  s.data(MsgType::kPush, 1, 4, {1, 1});
  s.data(MsgType::kPush, 2, 4, {1, 1});
  CHECK(s.out.size() == 3);

  // With SGD the round's sum updates the value once.
  s.out.clear();
  s.control(MsgType::kSetOptimizer, 0, sgd_text("0.5"));
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kReply);
  s.out.clear();
  for (int w = 0; w < 3; ++w) s.data(MsgType::kPush, w, 4, {2, 4});
  CHECK(s.out.size() == 3);
  CHECK(s.pull(1, 4, 2) == std::vector<float>{3 - 3, 3 - 6});
}

TEST_CASE("server: held replies echo their pushes; a push of another shape; init again resizes") {
  ServerHarness s(2, true);
  s.data(MsgType::kInit, 0, 6, {1, 2, 3});
  s.out.clear();
  s.data(MsgType::kPush, 1, 6, {1, 1, 1});
  const int64_t first = s.next_id - 1;
  s.data(MsgType::kPush, 0, 6, {1, 1, 1});
  const int64_t second = s.next_id - 1;
  REQUIRE(s.out.size() == 2);
  // Each reply goes to its worker with its request's id, key and part.
  for (const auto& r : s.out) {
    CHECK(r.header.id == (r.worker == 1 ? first : second));
    CHECK(r.header.key == 6);
    CHECK(r.header.count == 3);
  }
  // A push of another element count (same type) is an error, not a sum.
  s.out.clear();
  s.data(MsgType::kPush, 0, 6, {1, 1});
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kError);
  // Init again with fewer elements, then as float64: the value takes the new shape and type.
  s.out.clear();
  s.data(MsgType::kInit, 0, 6, {7, 8});
  CHECK(s.pull(0, 6, 2) == std::vector<float>{7, 8});
  Header h = s.header(MsgType::kInit, 6, 0, 2);
  h.dtype = static_cast<int32_t>(DType::kFloat64);
  h.bytes = 16;
  const std::vector<double> wide = {1e300, -2.5};
  std::memcpy(s.store.payload_buffer(h, 0), wide.data(), 16);
  s.store.handle(Request{h, 0, ""}, s.out);
  NDArray value = s.store.value(PartId{6, 0});
  REQUIRE(value.dtype() == DType::kFloat64);
  CHECK(value.to_vector<double>() == wide);
}

TEST_CASE("sync server: the sum is in worker order whatever the arrival order") {
  // Float sums of these depend on the order: worker order gives
  // (1e8 + -1e8) + 1 = 1, other orders 0 or 1.
  const std::vector<float> pushed = {1e8f, -1e8f, 1.0f};
  std::vector<int> arrival = {0, 1, 2};
  std::set<float> arrival_sums;
  do {
    CAPTURE(arrival[0]);
    CAPTURE(arrival[1]);
    CAPTURE(arrival[2]);
    float sum = pushed[static_cast<size_t>(arrival[0])];
    sum = sum + pushed[static_cast<size_t>(arrival[1])];
    sum = sum + pushed[static_cast<size_t>(arrival[2])];
    arrival_sums.insert(sum);
    ServerHarness s(3, true);
    s.data(MsgType::kInit, 0, 2, {5, 5, 5});
    for (int w : arrival)
      s.data(MsgType::kPush, w, 2, std::vector<float>(3, pushed[static_cast<size_t>(w)]));
    CHECK(s.pull(1, 2, 3) == std::vector<float>{1, 1, 1});
  } while (std::next_permutation(arrival.begin(), arrival.end()));
  CHECK(arrival_sums.size() == 2);  // the test can fail: some orders give another sum
}

TEST_CASE("sync server: replies to packed requests are marked packed, held ones too") {
  ServerHarness s(2, true);
  s.data(MsgType::kInit, 0, 1, {1, 2});
  s.out.clear();
  Header h = s.header(MsgType::kPush, 1, 0, 2);
  h.bytes = 8;
  const std::vector<float> g = {1, 1};
  std::memcpy(s.store.payload_buffer(h, 1), g.data(), 8);
  Request packed{h, 1, "", true};
  s.store.handle(packed, s.out);
  CHECK(s.out.empty());
  s.data(MsgType::kPush, 0, 1, {2, 2});  // not packed
  REQUIRE(s.out.size() == 2);
  for (const auto& r : s.out) CHECK(r.packed == (r.worker == 1));
  // A packed pull's reply, and a packed request's error.
  s.out.clear();
  s.store.handle(Request{s.header(MsgType::kPull, 1, 0, 2), 0, "", true}, s.out);
  s.store.handle(Request{s.header(MsgType::kPull, 9, 0, 2), 1, "", true}, s.out);
  REQUIRE(s.out.size() == 2);
  CHECK(s.out[0].packed);
  CHECK(s.out[0].reads_part);
  CHECK(s.out[1].packed);
  CHECK(s.out[1].header.type == MsgType::kError);
  s.store.sent(s.out[0].reading, s.out);
}

TEST_CASE("packed messages: entries round-trip, malformed payloads are refused") {
  PackWriter w;
  CHECK(w.empty());
  Header a;
  a.type = MsgType::kPush;
  a.key = 3;
  a.id = 11;
  a.count = 3;
  a.bytes = 12;
  const std::vector<float> av = {1.5f, -2, 3};
  Header b;
  b.type = MsgType::kPull;
  b.key = 4;
  b.id = 12;
  b.count = 5;
  Header c;
  c.type = MsgType::kError;
  c.id = 13;
  const std::string text = "server 0: bad";
  c.bytes = static_cast<int64_t>(text.size());
  w.add(a, av.data());
  w.add(b, nullptr);
  w.add(c, text.data());
  CHECK(w.entries() == 3);
  CHECK(w.size() == packed_entry_bytes(12) + packed_entry_bytes(0) + packed_entry_bytes(13));
  CHECK(packed_entry_bytes(12) == static_cast<int64_t>(sizeof(Header)) + 16);
  CHECK(packed_entry_bytes(16) == static_cast<int64_t>(sizeof(Header)) + 16);
  CHECK(packed_entry_bytes(0) == static_cast<int64_t>(sizeof(Header)));
  const Header h = w.header(77);
  CHECK(h.type == MsgType::kPacked);
  CHECK(h.id == 77);
  CHECK(h.count == 3);
  CHECK(h.bytes == w.size());
  PackBytes bytes = w.take();
  CHECK(w.empty());
  CHECK(w.size() == 0);
  REQUIRE(bytes.size == h.bytes);
  // The padding after a's 12 bytes is zeros.
  for (size_t i = sizeof(Header) + 12; i < sizeof(Header) + 16; ++i)
    CHECK(bytes.data[i] == std::byte{0});
  auto entries = unpack(h, bytes.data.get());
  REQUIRE(entries.size() == 3);
  CHECK(entries[0].header.key == 3);
  CHECK(entries[0].header.id == 11);
  std::vector<float> got(3);
  std::memcpy(got.data(), entries[0].data, 12);
  CHECK(got == av);
  CHECK(entries[1].header.type == MsgType::kPull);
  CHECK(entries[1].header.count == 5);
  CHECK(entries[1].header.bytes == 0);
  CHECK(std::string(reinterpret_cast<const char*>(entries[2].data), 13) == text);

  // A writer is reusable after take(), and grows past what it reserved.
  w.reserve(8);
  for (int i = 0; i < 40; ++i) w.add(a, av.data());
  PackBytes many = w.take();
  Header hm = h;
  hm.count = 40;
  hm.bytes = many.size;
  CHECK(unpack(hm, many.data.get()).size() == 40);

  // A negative size is a programming error, reported as one (not as a
  // failed allocation, nor as an entry that would make a malformed message).
  CHECK_THROWS_AS(PackBytes::make(-1), Error);
  Header negative = a;
  negative.bytes = -1;
  CHECK_THROWS_AS(w.add(negative, av.data()), Error);
  CHECK(w.empty());

  auto refused = [&](Header bad, const std::string& what) {
    CAPTURE(what);
    CHECK_THROWS_WITH_AS(unpack(bad, bytes.data.get()), doctest::Contains(what.c_str()), Error);
  };
  Header more = h;
  more.count = 4;  // the payload ends inside a 4th header
  refused(more, "ends inside the header of entry 3");
  Header fewer = h;
  fewer.count = 2;  // c's bytes are left over
  refused(fewer, "bytes after its 2 entries");
  Header none = h;
  none.count = 0;
  refused(none, "malformed packed message");
  Header shorter = h;
  shorter.bytes = h.bytes - 8;  // c's padded payload no longer fits
  refused(shorter, "does not fit");
  // An entry that claims more bytes than the message has, and a nested pack.
  Header big = a;
  big.bytes = 1 << 20;
  std::memcpy(bytes.data.get(), &big, sizeof(Header));
  refused(h, "entry 0 (push, 1048576 bytes) does not fit");
  Header nested = a;
  nested.type = MsgType::kPacked;
  std::memcpy(bytes.data.get(), &nested, sizeof(Header));
  refused(h, "entry 0 (packed");

  // What a packed message may announce: up to kMaxPackBytes, or one entry of
  // the largest packable key alone; more is refused before any allocation.
  CHECK(max_packed_message_bytes() == packed_entry_bytes(kMaxPackBytes));
  Header largest = h;
  largest.bytes = max_packed_message_bytes();
  CHECK(receive_buffer(largest).size == largest.bytes);
  Header over = h;
  over.id = 12;
  over.bytes = max_packed_message_bytes() + 1;
  const std::string limit = str("packed message 12 of ", over.bytes, " bytes is over the limit of ",
                                max_packed_message_bytes());
  CHECK_THROWS_WITH_AS(receive_buffer(over), doctest::Contains(limit.c_str()), Error);
  refused(over, "is over the limit");
  over.bytes = int64_t{1} << 40;  // a damaged header: no terabyte allocated
  CHECK_THROWS_WITH_AS(receive_buffer(over), doctest::Contains("over the limit"), Error);
  Header unpacked = h;
  unpacked.type = MsgType::kPush;
  CHECK_THROWS_WITH_AS(receive_buffer(unpacked), doctest::Contains("malformed packed message"),
                       Error);
  Header empty = h;
  empty.count = 0;
  CHECK_THROWS_AS(receive_buffer(empty), Error);
}

TEST_CASE("server: a push waits while a reply still reads the value") {
  ServerHarness s(1, true);
  s.data(MsgType::kInit, 0, 0, {5});
  s.out.clear();
  s.store.handle(Request{s.header(MsgType::kPull, 0, 0, 1), 0, ""}, s.out);
  REQUIRE(s.out.size() == 1);
  const PartId part = s.out[0].reading;
  const float* sending = static_cast<const float*>(s.out[0].data);
  s.out.clear();
  s.data(MsgType::kPush, 0, 0, {7});
  CHECK(s.out.empty());  // deferred
  CHECK(*sending == 5);  // the value being sent is untouched
  s.store.sent(part, s.out);
  REQUIRE(s.out.size() == 1);
  CHECK(s.pull(0, 0, 1) == std::vector<float>{7});
}

TEST_CASE("async server: every push is applied when it arrives") {
  ServerHarness s(2, false);
  s.data(MsgType::kInit, 0, 1, {10, 10});
  s.out.clear();
  s.data(MsgType::kPush, 0, 1, {1, 2});
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kError);  // no optimizer yet
  s.out.clear();
  s.control(MsgType::kSetOptimizer, 0, sgd_text("1"));
  s.out.clear();
  s.data(MsgType::kPush, 1, 1, {1, 2});
  REQUIRE(s.out.size() == 1);
  CHECK(s.pull(0, 1, 2) == std::vector<float>{9, 8});
  s.data(MsgType::kPush, 1, 1, {1, 2});
  CHECK(s.pull(0, 1, 2) == std::vector<float>{8, 6});
  // A compressed push is decoded, then applied.
  std::vector<float> grad = {0.6f, -0.6f}, residual(2, 0.0f);
  uint32_t word = 0;
  quantize_2bit(grad.data(), residual.data(), &word, 2, 0.5f);
  Header h = s.header(MsgType::kPush, 1, 0, 2);
  h.compressed = 1;
  h.threshold = 0.5;
  h.bytes = 4;
  std::memcpy(s.store.payload_buffer(h, 0), &word, 4);
  s.out.clear();
  s.store.handle(Request{h, 0, ""}, s.out);
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kReply);
  CHECK(s.pull(1, 1, 2) == std::vector<float>{7.5f, 6.5f});
}

TEST_CASE("server: split parts, compressed pushes, errors, bye") {
  ServerHarness s(2, true);
  // Two parts of one key are independent.
  s.data(MsgType::kInit, 0, 9, {1, 1, 1}, 0);
  s.data(MsgType::kInit, 0, 9, {2, 2}, 3);
  CHECK(s.pull(0, 9, 3, 0) == std::vector<float>{1, 1, 1});
  CHECK(s.pull(0, 9, 2, 3) == std::vector<float>{2, 2});

  // Compressed pushes are decoded before the sum.
  s.out.clear();
  std::vector<float> r0(2, 0.0f), r1(2, 0.0f), g0 = {0.7f, -0.7f}, g1 = {0.7f, 0.1f};
  for (int w = 0; w < 2; ++w) {
    uint32_t word = 0;
    quantize_2bit((w == 0 ? g0 : g1).data(), (w == 0 ? r0 : r1).data(), &word, 2, 0.5f);
    Header h = s.header(MsgType::kPush, 9, 3, 2);
    h.compressed = 1;
    h.threshold = 0.5;
    h.bytes = 4;
    std::memcpy(s.store.payload_buffer(h, w), &word, 4);
    s.store.handle(Request{h, w, ""}, s.out);
  }
  CHECK(s.out.size() == 2);
  CHECK(s.pull(1, 9, 2, 3) == std::vector<float>{1.0f, -0.5f});

  // Pulling what was never initialized, a bad payload size, a bad optimizer.
  s.out.clear();
  s.store.handle(Request{s.header(MsgType::kPull, 42, 0, 3), 0, ""}, s.out);
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kError);
  CHECK(s.out[0].text.find("not initialized") != std::string::npos);
  Header bad = s.header(MsgType::kPush, 9, 0, 3);
  bad.bytes = 5;
  CHECK_THROWS_AS(s.store.payload_buffer(bad, 0), Error);
  s.out.clear();
  s.control(MsgType::kSetOptimizer, 0, "{not json");
  REQUIRE(s.out.size() == 1);
  CHECK(s.out[0].header.type == MsgType::kError);

  CHECK_FALSE(s.store.done());
  s.control(MsgType::kBye, 0, "");
  s.control(MsgType::kBye, 1, "");
  CHECK(s.store.done());
}

TEST_CASE("16-bit pushes: rounded as bf16_t and half_t, widened back, summed in float32") {
  const std::vector<float> g = {1.0f, -2.5f, 3.14159f, 1e-3f, 65504.0f, -0.0f, 1.00390625f};
  for (PushEncoding e : {PushEncoding::kBFloat16, PushEncoding::kFloat16}) {
    CAPTURE(static_cast<int>(e));
    std::vector<uint16_t> narrow(g.size());
    narrow_values(e, g.data(), narrow.data(), static_cast<int64_t>(g.size()));
    std::vector<float> wide(g.size()), sum(g.size(), 1.0f);
    widen_values(e, narrow.data(), wide.data(), static_cast<int64_t>(g.size()), false);
    widen_values(e, narrow.data(), sum.data(), static_cast<int64_t>(g.size()), true);
    for (size_t i = 0; i < g.size(); ++i) {
      const float want = e == PushEncoding::kBFloat16 ? float(bf16_t(g[i])) : float(half_t(g[i]));
      CHECK(wide[i] == want);
      CHECK(sum[i] == 1.0f + want);
    }
  }
  CHECK(narrow_encoding(DType::kFloat32) == PushEncoding::kValues);
  CHECK(narrow_encoding(DType::kBFloat16) == PushEncoding::kBFloat16);
  CHECK_THROWS_AS(narrow_encoding(DType::kFloat64), InputError);
  CHECK_THROWS_AS(encoding_of(9), Error);

  // A sync server widens each worker's bfloat16 push and sums in float32.
  ServerHarness s(2, true);
  s.data(MsgType::kInit, 0, 4, {0, 0, 0});
  s.out.clear();
  const std::vector<float> g0 = {1.5f, 1.0f / 3.0f, -7.0f}, g1 = {0.25f, 1.0f / 3.0f, 2.0f};
  std::vector<float> want(3);
  for (int w = 0; w < 2; ++w) {
    const auto& gw = w == 0 ? g0 : g1;
    Header h = s.header(MsgType::kPush, 4, 0, 3);
    h.compressed = static_cast<int32_t>(PushEncoding::kBFloat16);
    h.bytes = 6;
    narrow_values(PushEncoding::kBFloat16, gw.data(), s.store.payload_buffer(h, w), 3);
    s.store.handle(Request{h, w, ""}, s.out);
    for (size_t i = 0; i < 3; ++i) want[i] += float(bf16_t(gw[i]));
  }
  CHECK(s.out.size() == 2);
  CHECK(s.pull(0, 4, 3) == want);
  // A 16-bit push must carry two bytes per value.
  Header bad = s.header(MsgType::kPush, 4, 0, 3);
  bad.compressed = static_cast<int32_t>(PushEncoding::kFloat16);
  bad.bytes = 12;
  CHECK_THROWS_AS(s.store.payload_buffer(bad, 0), Error);
}

TEST_CASE("key parts, 2-bit decoding bounds, 16-bit keys over one block, and misuse refused") {
  // A small key is one part at offset 0, an empty key too; 0 servers or a
  // negative key are refused.
  const auto one = partition_key(3, 10, 1, 1000);
  REQUIRE(one.size() == 1);
  CHECK(one[0].offset == 0);
  CHECK(one[0].count == 10);
  CHECK(partition_key(3, 0, 2, 1000).size() == 1);
  CHECK_THROWS(partition_key(3, 10, 0, 1000));
  CHECK_THROWS(server_for_key(3, 0));
  CHECK_THROWS(server_for_key(-1, 2));
  CHECK(server_for_key(5, 1) == 0);
  // Decoding writes exactly n values: sentinels on both sides stay.
  const float sentinel = 12345.0f;
  std::vector<float> g = {0.7f, -0.7f, 0.1f}, residual(3, 0.0f);
  uint32_t word = 0;
  quantize_2bit(g.data(), residual.data(), &word, 3, 0.5f);
  for (bool add : {false, true}) {
    std::vector<float> out(5, sentinel);
    if (add)
      dequantize_2bit_add(&word, out.data() + 1, 3, 0.5f);
    else
      dequantize_2bit(&word, out.data() + 1, 3, 0.5f);
    CHECK(out[0] == sentinel);
    CHECK(out[4] == sentinel);
  }
  // Any positive threshold, 1 included, is valid.
  CHECK_NOTHROW(validate(CompressionSpec{"2bit", 0.5f}));
  CHECK_NOTHROW(validate(CompressionSpec{"2bit", 1.0f}));
  // Keys longer than one conversion block (1024 values), both 16-bit types.
  std::vector<float> long_key(2500);
  for (size_t i = 0; i < long_key.size(); ++i) long_key[i] = 0.001f * static_cast<float>(i) - 1.0f;
  for (PushEncoding e : {PushEncoding::kBFloat16, PushEncoding::kFloat16}) {
    std::vector<uint16_t> narrow(long_key.size());
    narrow_values(e, long_key.data(), narrow.data(), static_cast<int64_t>(long_key.size()));
    std::vector<float> back(long_key.size() + 1, sentinel);
    widen_values(e, narrow.data(), back.data(), static_cast<int64_t>(long_key.size()), false);
    for (size_t i = 0; i < long_key.size(); ++i)
      CHECK(back[i] == (e == PushEncoding::kBFloat16 ? float(bf16_t(long_key[i]))
                                                     : float(half_t(long_key[i]))));
    CHECK(back.back() == sentinel);
  }
  // Only the 16-bit encodings narrow or widen.
  float x = 1.0f;
  uint16_t y = 0;
  CHECK_THROWS(narrow_values(PushEncoding::kValues, &x, &y, 1));
  CHECK_THROWS(narrow_values(PushEncoding::kTwoBit, &x, &y, 1));
  CHECK_THROWS(widen_values(PushEncoding::kTwoBit, &y, &x, 1, false));
}

TEST_CASE("every message type has the name its messages print") {
  // The names appear in the servers' and workers' error messages.
  const std::vector<std::pair<MsgType, std::string>> names = {
      {MsgType::kInit, "init"},
      {MsgType::kPush, "push"},
      {MsgType::kPull, "pull"},
      {MsgType::kSetOptimizer, "set-optimizer"},
      {MsgType::kSaveStates, "save-states"},
      {MsgType::kLoadStates, "load-states"},
      {MsgType::kBye, "bye"},
      {MsgType::kReply, "reply"},
      {MsgType::kError, "error"},
      {MsgType::kHeartbeat, "heartbeat"},
      {MsgType::kPacked, "packed"}};
  for (const auto& [type, name] : names) CHECK(std::string(msg_type_name(type)) == name);
  // A header's type comes off the wire: a value outside the enum is named as such.
  CHECK(std::string(msg_type_name(static_cast<MsgType>(0))) == "unknown");
  CHECK(std::string(msg_type_name(static_cast<MsgType>(99))) == "unknown");
}

TEST_CASE("the optimizer reaches the servers unchanged") {
  auto opt = optim::make_optimizer(
      "sgd", {{"learning_rate", "0.1"}, {"momentum", "0.9"}, {"wd", "0.001"}});
  opt->set_lr_scheduler(
      optim::make_lr_scheduler("factor", {{"step", "2"}, {"factor", "0.5"}}, 0.1));
  opt->set_param_names({{0, "fc_weight"}, {1, "fc_bias"}});
  opt->set_lr_mult({{"fc_bias", 2.0}});
  opt->set_wd_mult({{"fc_weight", 0.25}});
  auto copy = deserialize_optimizer(serialize_optimizer(*opt), "test");
  CHECK(copy->name() == "sgd");
  CHECK(copy->params() == opt->params());
  CHECK(copy->param_names() == opt->param_names());
  CHECK(copy->lr_mult(1) == 2.0);
  CHECK(copy->wd_mult(1) == 0.0);  // a bias: no weight decay
  CHECK(copy->wd_mult(0) == 0.25);
  // The same updates give the same weights.
  optim::Updater a(std::move(opt)), b(std::move(copy));
  NDArray wa = vec({1, 2}), wb = vec({1, 2});
  for (int step = 0; step < 5; ++step) {
    a(1, vec({0.5f, -1}), wa);
    b(1, vec({0.5f, -1}), wb);
  }
  CHECK(values(wa) == values(wb));
  CHECK(a.optimizer().learning_rate() == b.optimizer().learning_rate());
  CHECK_THROWS_WITH_AS(deserialize_optimizer("{}", "test"), "test: not an optimizer description",
                       InputError);
  CHECK_THROWS_WITH_AS(deserialize_optimizer("[1]", "test"), "test: not an optimizer description",
                       InputError);
  CHECK_THROWS_WITH_AS(deserialize_optimizer("[", "test"),
                       doctest::Contains("test: optimizer description is not valid JSON: "),
                       InputError);
  CHECK_THROWS_WITH_AS(deserialize_optimizer(R"({"format": "mx-optimizer"})", "test"),
                       doctest::Contains("test: malformed optimizer description: "), InputError);
  // A parameter index that is not a number.
  std::string text = serialize_optimizer(b.optimizer());
  const std::string index = R"("param_names":{"0")";
  REQUIRE(text.find(index) != std::string::npos);
  text.replace(text.find(index), index.size(), R"("param_names":{"x")");
  CHECK_THROWS_WITH_AS(deserialize_optimizer(text, "test"),
                       doctest::Contains("test: malformed optimizer description: "), InputError);
}

namespace {

RankInfo rank_info(int rank, Role role, int app, uint64_t hash = 1) {
  RankInfo r;
  r.rank = rank;
  r.role = role;
  r.appnum = app;
  r.host = "h" + std::to_string(rank);
  r.config_hash = role == Role::kWorker ? hash : 0;
  return r;
}

}  // namespace

TEST_CASE("role map: indices, the printed table, start-up problems") {
  RoleMap ok({rank_info(0, Role::kServer, 0), rank_info(1, Role::kWorker, 1),
              rank_info(2, Role::kWorker, 1), rank_info(3, Role::kServer, 0)});
  CHECK(ok.problem().empty());
  CHECK(ok.num_servers() == 2);
  CHECK(ok.num_workers() == 2);
  CHECK(ok.server_rank(1) == 3);
  CHECK(ok.worker_rank(1) == 2);
  CHECK(ok.describe(2) == "rank 2 (host h2, worker 1)");
  // Ranks outside the map (a message about a peer that never joined).
  CHECK(ok.describe(-1) == "rank -1");
  CHECK(ok.describe(4) == "rank 4");
  CHECK(ok.describe(7) == "rank 7");
  CHECK(ok.table().find("3     h3  ") != std::string::npos);

  RoleMap servers_only({rank_info(0, Role::kServer, 0), rank_info(1, Role::kServer, 0)});
  CHECK(servers_only.problem().find("without workers") != std::string::npos);
  RoleMap workers_only({rank_info(0, Role::kWorker, 0), rank_info(1, Role::kWorker, 0)});
  CHECK(workers_only.problem().find("needs servers") != std::string::npos);
  RoleMap differ({rank_info(0, Role::kServer, 0), rank_info(1, Role::kWorker, 1, 5),
                  rank_info(2, Role::kWorker, 1, 6)});
  CHECK(differ.problem().find("configs differ") != std::string::npos);
  CHECK(differ.problem().find("rank 2") != std::string::npos);
  auto async = rank_info(2, Role::kWorker, 1);
  async.sync = false;
  RoleMap modes({rank_info(0, Role::kServer, 0), rank_info(1, Role::kWorker, 1), async});
  CHECK(modes.problem().find("settings differ") != std::string::npos);
  // A rank of another build (another protocol) is named, whatever its role.
  auto old_server = rank_info(0, Role::kServer, 0);
  old_server.protocol = 0;
  auto current = rank_info(1, Role::kWorker, 1);
  current.protocol = kProtocolVersion;
  RoleMap builds({old_server, current});
  CHECK(builds.problem().find("different kvstore protocols") != std::string::npos);
  CHECK(builds.problem().find("rank 1") != std::string::npos);
  CHECK(builds.problem().find("version 3") != std::string::npos);
  CHECK(builds.problem().find("rank 0 (host h0, server 0) speaks version 0") != std::string::npos);
  // One -np block of the command line holding both roles.
  RoleMap mixed({rank_info(0, Role::kServer, 0), rank_info(1, Role::kWorker, 0)});
  CHECK(mixed.problem().rfind("application 0 of the mpirun command line has both servers and "
                              "workers",
                              0) == 0);
}

TEST_CASE("kvstore settings parse with the usual messages and make the job") {
  auto p = KVStoreParams::from_strings({{"type", "device"}}, "kvstore");
  CHECK(p.type == StoreType::kDevice);
  CHECK(p.bigarray_bound == 1000000);
  CHECK(p.heartbeat_timeout == 10.0);
  CHECK(p.heartbeat_interval == 1.0);
  // The heartbeat's bounds: 0.01 s between beats, 0.1 s of silence at least.
  CHECK(
      KVStoreParams::from_strings({{"heartbeat_interval", "0.01"}}, "kvstore").heartbeat_interval ==
      0.01);
  CHECK_THROWS_AS(KVStoreParams::from_strings({{"heartbeat_interval", "0.005"}}, "kvstore"),
                  InputError);
  CHECK(KVStoreParams::from_strings({{"heartbeat_timeout", "0.1"}}, "kvstore").heartbeat_timeout ==
        0.1);
  CHECK_THROWS_AS(KVStoreParams::from_strings({{"heartbeat_timeout", "0.05"}}, "kvstore"),
                  InputError);
  CHECK(p.pack_threshold == 16384);
  CHECK(p.pack_threshold == kDefaultPackThreshold);
  CHECK(KVStoreParams::from_strings({{"pack_threshold", "0"}}, "kvstore").pack_threshold == 0);
  CHECK(KVStoreParams::from_strings({{"pack_threshold", "16777216"}}, "kvstore").pack_threshold ==
        kMaxPackBytes);
  CHECK_THROWS_AS(KVStoreParams::from_strings({{"pack_threshold", "-1"}}, "kvstore"), InputError);
  CHECK_THROWS_AS(KVStoreParams::from_strings({{"pack_threshold", "16777217"}}, "kvstore"),
                  InputError);
  CHECK(join_job(p, 2, 0)->kvstore()->type() == "device");
  CHECK_FALSE(join_job(p, 2, 0)->kvstore()->packs(0));  // only the dist stores pack
  CHECK(join_job(KVStoreParams::from_strings({}, "kvstore"), 2, 0)->kvstore()->type() == "local");
  // One device needs no store: the trainer's updater does its work.
  CHECK(join_job(p, 1, 0)->kvstore() == nullptr);
  CHECK_THROWS_WITH_AS(KVStoreParams::from_strings({{"type", "dist_synk"}}, "kvstore"),
                       doctest::Contains("dist_sync"), InputError);
  CHECK_THROWS_AS(KVStoreParams::from_strings({{"bigarray_bound", "0"}}, "kvstore"), InputError);
  CHECK_THROWS_WITH_AS(KVStoreParams::from_strings({{"heartbeat_timout", "3"}}, "kvstore"),
                       doctest::Contains("heartbeat_timeout"), InputError);
  auto bad = KVStoreParams::from_strings(
      {{"type", "dist_sync"}, {"heartbeat_interval", "5"}, {"heartbeat_timeout", "2"}}, "kvstore");
  // join_job's own check, before any MPI: its message, and equal values refused too.
  CHECK_THROWS_WITH_AS(join_job(bad, 1, 0),
                       "kvstore: heartbeat_timeout (2 s) must be longer than heartbeat_interval "
                       "(5 s)",
                       InputError);
  auto equal = KVStoreParams::from_strings(
      {{"type", "dist_async"}, {"heartbeat_interval", "2"}, {"heartbeat_timeout", "2"}}, "kvstore");
  CHECK_THROWS_WITH_AS(join_job(equal, 1, 0), doctest::Contains("heartbeat_timeout (2 s)"),
                       InputError);
  // A worker made directly (the C API, tests) checks its heartbeat settings
  // before it starts MPI.
  DistOptions direct;
  direct.heartbeat_interval_s = 5;
  direct.heartbeat_timeout_s = 2;
  CHECK_THROWS_WITH_AS(DistCoordinator{direct},
                       "kvstore heartbeat: interval (5 s) must be > 0 and below the time-out (2 s)",
                       InputError);
  // What a worker publishes: its store type's synchrony and its settings.
  DistOptions async;
  async.type = "dist_async";
  async.config_hash = 0x5eed;
  async.heartbeat_interval_s = 0.5;
  async.heartbeat_timeout_s = 3;
  const RankInfo published = worker_rank_info(async);
  CHECK(published.role == Role::kWorker);
  CHECK_FALSE(published.sync);
  CHECK(published.config_hash == 0x5eed);
  CHECK(published.heartbeat_interval_s == 0.5);
  CHECK(published.heartbeat_timeout_s == 3);
  CHECK(worker_rank_info(DistOptions{}).sync);  // dist_sync by default
  direct.heartbeat_interval_s = 0;
  CHECK_THROWS_WITH_AS(DistCoordinator{direct},
                       "kvstore heartbeat: interval (0 s) must be > 0 and below the time-out (2 s)",
                       InputError);

  // Every setting carries its one-line description (the parameter structs'
  // convention; a required field's description is part of its "missing" message).
  for (const auto& info : KVStoreParams::field_infos()) {
    CAPTURE(info.name);
    CHECK_FALSE(info.description.empty());
  }
  for (const auto& info : CompressionParams::field_infos()) {
    CAPTURE(info.name);
    CHECK_FALSE(info.description.empty());
  }

  auto c = CompressionParams::from_strings({{"type", "2bit"}, {"threshold", "0.25"}}, "c");
  CHECK(c.spec().enabled());
  CHECK(c.spec().threshold == 0.25f);
  CHECK_FALSE(CompressionParams::from_strings({}, "c").spec().enabled());
  CHECK_THROWS_AS(CompressionParams::from_strings({{"type", "1bit"}}, "c"), InputError);
}

TEST_CASE("a single process is a job of one worker whose collectives return its own values") {
  auto job = single_process();
  CHECK(job->rank() == 0);
  CHECK(job->num_workers() == 1);
  CHECK_FALSE(job->distributed());
  CHECK(job->workers_per_update() == 1);
  CHECK(job->kvstore() == nullptr);
  CHECK(job->allreduce({1.5, -2}, Reduce::kSum) == std::vector<double>{1.5, -2});
  CHECK(job->on_all(true));
  CHECK_FALSE(job->on_all(false));
  CHECK(job->on_any({false, true}) == std::vector<bool>{false, true});
  // One process reads its data to the end: no count to agree on.
  CHECK_FALSE(job->agree_on_batches(12).has_value());
  job->barrier();
  job->finish();
  // A fatal error of the one process is the program's to print.
  try {
    throw InputError("bad batch");
  } catch (const std::exception& e) {
    CHECK_THROWS_WITH_AS(job->fail(e), "bad batch", InputError);
  }
  CHECK(single_process(make_local_kvstore("local"))->kvstore()->type() == "local");
}

namespace {

// Plays the other workers of a job: the collectives combine this worker's
// values with theirs.
class FakeWorkers : public Coordinator {
 public:
  FakeWorkers(std::initializer_list<std::vector<double>> others) : others_(others) {}
  int rank() const override { return 0; }
  int num_workers() const override { return static_cast<int>(others_.size()) + 1; }
  bool distributed() const override { return true; }
  int workers_per_update() const override { return num_workers(); }
  KVStore* kvstore() override { return nullptr; }
  void barrier() override {}
  void finish() override {}
  [[noreturn]] void fail(const std::exception&) override { throw; }
  std::vector<double> allreduce(std::vector<double> values, Reduce op) override {
    for (const auto& other : others_)
      for (size_t i = 0; i < values.size(); ++i)
        values[i] = op == Reduce::kSum   ? values[i] + other.at(i)
                    : op == Reduce::kMin ? std::min(values[i], other.at(i))
                                         : std::max(values[i], other.at(i));
    return values;
  }

 private:
  std::vector<std::vector<double>> others_;
};

}  // namespace

TEST_CASE("the job's decisions are taken over every worker") {
  // Batches per epoch: the smallest count; unknown anywhere (-1) means none.
  CHECK(FakeWorkers{{7}, {9}}.agree_on_batches(8) == std::optional<int64_t>(7));
  // A worker with no whole batch: all agree on none (a count, not "unknown").
  CHECK(FakeWorkers{{0}, {9}}.agree_on_batches(8) == std::optional<int64_t>(0));
  CHECK_FALSE(FakeWorkers{{-1}}.agree_on_batches(8).has_value());
  CHECK_FALSE(FakeWorkers{{5}}.agree_on_batches(std::nullopt).has_value());
  // Another batch only while every worker has one; a stop when any asks.
  CHECK_FALSE(FakeWorkers{{1}, {0}}.on_all(true));
  CHECK(FakeWorkers{{1}, {1}}.on_all(true));
  CHECK(FakeWorkers{{0, 1}}.on_any({false, false}) == std::vector<bool>{false, true});
}
