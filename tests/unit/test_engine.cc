#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "base/error.h"
#include "engine/engine.h"
#include "engine/stream_fence.h"

using namespace mx;

namespace {

std::unique_ptr<Engine> make(EngineKind kind, int threads = 4) {
  return Engine::create({kind, threads});
}

// Spins for a few microseconds so operations overlap in many different ways.
void jitter(uint64_t seed) {
  auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(seed % 7);
  while (std::chrono::steady_clock::now() < until) {
  }
}

uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

struct RandomOp {
  std::vector<int> reads, writes;
  uint64_t id;
};

// Applies one operation to the cells: every written cell mixes in its own
// value, every read cell and the operation's id. Order matters, so any
// dependency violation changes the final values.
void apply(const RandomOp& op, std::vector<uint64_t>& cells) {
  uint64_t in = op.id;
  for (int r : op.reads) in = mix(in, cells[static_cast<size_t>(r)]);
  for (int w : op.writes) cells[static_cast<size_t>(w)] = mix(cells[static_cast<size_t>(w)], in);
}

RandomOp random_op(std::mt19937_64& rng, int num_cells, uint64_t id) {
  RandomOp op;
  op.id = id;
  std::uniform_int_distribution<int> cell(0, num_cells - 1);
  int nr = static_cast<int>(rng() % 4), nw = static_cast<int>(rng() % 3);
  for (int i = 0; i < nr; ++i) op.reads.push_back(cell(rng));
  for (int i = 0; i < nw; ++i) op.writes.push_back(cell(rng));
  // A cell both read and written counts as written (as the engine does);
  // duplicates are harmless: reads/writes use values at the operation's start.
  return op;
}

// Pushes `ops_per_thread` random operations from each of `pushers` threads and
// compares the final cells with a serial run in the recorded push order.
void stress(EngineKind kind, int pushers, int ops_per_thread, int num_cells, uint64_t seed) {
  auto engine = make(kind);
  std::vector<VarHandle> vars;
  for (int i = 0; i < num_cells; ++i) vars.push_back(engine->new_var());
  std::vector<uint64_t> cells(static_cast<size_t>(num_cells));
  for (int i = 0; i < num_cells; ++i) cells[static_cast<size_t>(i)] = static_cast<uint64_t>(i);
  std::vector<uint64_t> expected = cells;

  std::mutex order_mutex;
  std::vector<RandomOp> order;
  std::vector<std::thread> threads;
  for (int t = 0; t < pushers; ++t) {
    threads.emplace_back([&, t] {
      std::mt19937_64 rng(seed + static_cast<uint64_t>(t));
      for (int i = 0; i < ops_per_thread; ++i) {
        RandomOp op =
            random_op(rng, num_cells, static_cast<uint64_t>(t) << 32 | static_cast<uint64_t>(i));
        std::vector<Var*> reads, writes;
        for (int r : op.reads) reads.push_back(vars[static_cast<size_t>(r)].get());
        for (int w : op.writes) writes.push_back(vars[static_cast<size_t>(w)].get());
        std::lock_guard<std::mutex> lock(order_mutex);  // push order == recorded order
        order.push_back(op);
        int priority = static_cast<int>(rng() % 3);
        engine->push(
            [op, &cells](RunContext) {
              jitter(op.id);
              apply(op, cells);  // touches only the cells it declared
            },
            Context::cpu(), reads, writes, FnProperty::kNormal, priority, "random op");
      }
    });
  }
  for (auto& t : threads) t.join();
  engine->wait_all();
  for (const auto& op : order) apply(op, expected);
  CHECK(cells == expected);
}

}  // namespace

TEST_CASE("threaded engine: random read/write sets give the serial result") {
  // Several pushing threads; the engine's order is the order of the pushes.
  stress(EngineKind::kThreaded, 3, 3000, 12, 1);
  stress(EngineKind::kThreaded, 1, 6000, 5, 2);  // few cells: long dependency chains
  stress(EngineKind::kThreaded, 4, 1500, 64, 3);
}

TEST_CASE("naive engine: random read/write sets give the serial result") {
  stress(EngineKind::kNaive, 2, 1000, 8, 4);
}

TEST_CASE("readers of a variable run concurrently, writers alone") {
  auto engine = make(EngineKind::kThreaded, 4);
  VarHandle v = engine->new_var();
  std::atomic<int> running_readers{0}, max_readers{0}, writers_running{0};
  std::atomic<bool> overlap{false};
  for (int round = 0; round < 20; ++round) {
    for (int i = 0; i < 4; ++i)
      engine->push(
          [&](RunContext) {
            int now = ++running_readers;
            int prev = max_readers.load();
            while (now > prev && !max_readers.compare_exchange_weak(prev, now)) {
            }
            if (writers_running.load() != 0) overlap = true;
            std::this_thread::sleep_for(std::chrono::microseconds(300));
            --running_readers;
          },
          Context::cpu(), {v.get()}, {});
    engine->push(
        [&](RunContext) {
          if (++writers_running != 1 || running_readers.load() != 0) overlap = true;
          std::this_thread::sleep_for(std::chrono::microseconds(100));
          --writers_running;
        },
        Context::cpu(), {}, {v.get()});
  }
  engine->wait_all();
  CHECK_FALSE(overlap.load());
  CHECK(max_readers.load() >= 2);
}

TEST_CASE(
    "set_active_cpu_workers bounds the CPU operations running at once, and lets workers back") {
  auto engine = make(EngineKind::kThreaded, 4);
  // Independent readers of one variable: as many run at once as workers take them.
  auto most_at_once = [&] {
    VarHandle v = engine->new_var();
    std::atomic<int> running{0}, most{0};
    std::mutex threads_mutex;
    std::vector<std::thread::id> threads;
    for (int i = 0; i < 24; ++i)
      engine->push(
          [&](RunContext) {
            const int now = ++running;
            int prev = most.load();
            while (now > prev && !most.compare_exchange_weak(prev, now)) {
            }
            {
              std::lock_guard lock(threads_mutex);
              threads.push_back(std::this_thread::get_id());
            }
            std::this_thread::sleep_for(std::chrono::microseconds(500));
            --running;
          },
          Context::cpu(), {v.get()}, {});
    engine->wait_all();
    std::sort(threads.begin(), threads.end());
    const auto distinct = std::unique(threads.begin(), threads.end()) - threads.begin();
    return std::pair<int, int64_t>{most.load(), distinct};
  };
  CHECK(most_at_once().first >= 2);
  engine->set_active_cpu_workers(1);
  const auto [one_most, one_threads] = most_at_once();
  CHECK(one_most == 1);
  CHECK(one_threads == 1);            // always the same worker: its OpenMP team stays warm
  engine->set_active_cpu_workers(0);  // clamped to 1: work still runs
  CHECK(most_at_once().first == 1);
  engine->set_active_cpu_workers(100);  // clamped to the pool
  CHECK(most_at_once().first >= 2);
  // A worker left out while work is queued: nothing is lost or stuck.
  VarHandle v = engine->new_var();
  std::atomic<int> done{0};
  for (int i = 0; i < 200; ++i) {
    if (i % 50 == 0) engine->set_active_cpu_workers(1 + (i / 50) % 2);
    engine->push([&](RunContext) { ++done; }, Context::cpu(), {v.get()}, {});
  }
  engine->wait_all();
  CHECK(done.load() == 200);
}

TEST_CASE("the naive engine takes set_active_cpu_workers and still runs everything on the caller") {
  auto engine = make(EngineKind::kNaive);
  engine->set_active_cpu_workers(1);
  VarHandle v = engine->new_var();
  int ran = 0;
  engine->push([&](RunContext) { ++ran; }, Context::cpu(), {}, {v.get()});
  CHECK(ran == 1);
}

TEST_CASE("writes run in push order and wait_for_var waits for them") {
  for (auto kind : {EngineKind::kThreaded, EngineKind::kNaive}) {
    auto engine = make(kind);
    VarHandle v = engine->new_var();
    std::vector<int> log;
    for (int i = 0; i < 500; ++i)
      engine->push([&log, i](RunContext) { log.push_back(i); }, Context::cpu(), {}, {v.get()});
    engine->wait_for_var(v.get());
    REQUIRE(log.size() == 500);
    for (int i = 0; i < 500; ++i) CHECK(log[static_cast<size_t>(i)] == i);
  }
}

TEST_CASE("higher priority runs first among ready operations") {
  auto engine = make(EngineKind::kThreaded, 1);
  VarHandle gate = engine->new_var();
  std::atomic<bool> started{false}, open{false};
  std::vector<int> order;
  std::mutex m;
  // Block the only worker, then queue independent operations of different
  // priority: only once the worker holds the blocking operation are they all
  // waiting together (else the worker could take the first one pushed).
  engine->push(
      [&](RunContext) {
        started = true;
        while (!open.load()) std::this_thread::yield();
      },
      Context::cpu(), {}, {gate.get()});
  while (!started.load()) std::this_thread::yield();
  std::vector<VarHandle> vars;
  for (int p : {0, 5, 1, 9, 3}) {
    vars.push_back(engine->new_var());
    engine->push(
        [&, p](RunContext) {
          std::lock_guard<std::mutex> lock(m);
          order.push_back(p);
        },
        Context::cpu(), {}, {vars.back().get()}, FnProperty::kNormal, p);
  }
  open = true;
  engine->wait_all();
  CHECK(order == std::vector<int>{9, 5, 3, 1, 0});
}

TEST_CASE(
    "an exception is re-thrown with the operation's name, passed on, and cleared by a good write") {
  for (auto kind : {EngineKind::kThreaded, EngineKind::kNaive}) {
    CAPTURE(static_cast<int>(kind));
    auto engine = make(kind);
    VarHandle a = engine->new_var(), b = engine->new_var(), c = engine->new_var();
    bool downstream_ran = false;
    engine->push([](RunContext) { throw InputError("bad value 42"); }, Context::cpu(), {},
                 {a.get()}, FnProperty::kNormal, 0, "produce a");
    engine->push([&](RunContext) { downstream_ran = true; }, Context::cpu(), {a.get()}, {b.get()},
                 FnProperty::kNormal, 0, "a to b");
    engine->push([](RunContext) {}, Context::cpu(), {}, {c.get()}, FnProperty::kNormal, 0, "c");
    try {
      engine->wait_for_var(b.get());
      FAIL("expected the failure of 'produce a'");
    } catch (const Error& e) {
      CHECK(std::string(e.what()) == "in operation 'produce a': bad value 42");
      CHECK(e.exit_code() == 2);  // the kind of the original error survives
    }
    CHECK_FALSE(downstream_ran);                   // skipped: its input failed
    CHECK_NOTHROW(engine->wait_for_var(c.get()));  // unrelated work is fine
    CHECK_THROWS_AS(engine->wait_for_var(a.get()), Error);
    // Reported once by wait_for_var: wait_all does not report it again.
    CHECK_NOTHROW(engine->wait_all());
    // A successful write replaces the failed value; the engine is usable.
    engine->push([](RunContext) {}, Context::cpu(), {}, {a.get()}, FnProperty::kNormal, 0, "fix a");
    CHECK_NOTHROW(engine->wait_for_var(a.get()));
    engine->push([](RunContext) { throw std::runtime_error("boom"); }, Context::cpu(), {},
                 {c.get()}, FnProperty::kNormal, 0, "explode");
    CHECK_THROWS_WITH_AS(engine->wait_all(), "in operation 'explode': boom", Error);
    CHECK_NOTHROW(engine->wait_all());
  }
}

TEST_CASE("asynchronous operations complete from another thread") {
  for (auto kind : {EngineKind::kThreaded, EngineKind::kNaive}) {
    auto engine = make(kind);
    VarHandle v = engine->new_var();
    std::vector<std::thread> helpers;
    std::mutex helpers_mutex;
    std::atomic<int> value{0};
    for (int i = 0; i < 50; ++i) {
      engine->push_async(
          [&, i](RunContext, OnComplete done) {
            std::lock_guard<std::mutex> lock(helpers_mutex);
            helpers.emplace_back([&value, done, i] {
              if (value.load() != i) value = -1000;  // ran out of order
              value = i + 1;
              done();
            });
          },
          Context::cpu(), {}, {v.get()}, FnProperty::kNormal, 0, "async");
    }
    engine->push_async(
        [](RunContext, OnComplete done) { done(std::make_exception_ptr(Error("late failure"))); },
        Context::cpu(), {}, {v.get()}, FnProperty::kNormal, 0, "async failure");
    CHECK_THROWS_WITH_AS(engine->wait_for_var(v.get()),
                         "in operation 'async failure': late failure", Error);
    CHECK(value.load() == 50);
    engine->wait_all();
    std::lock_guard<std::mutex> lock(helpers_mutex);
    for (auto& t : helpers) t.join();
  }
}

TEST_CASE("deleting a variable waits for its pending operations, without blocking the caller") {
  auto engine = make(EngineKind::kThreaded, 2);
  std::atomic<int> done_ops{0};
  std::atomic<bool> deleted_after_all{false};
  std::atomic<bool> release{false};
  {
    VarHandle v = engine->new_var();
    engine->push(
        [&](RunContext) {
          while (!release.load()) std::this_thread::yield();
          ++done_ops;
        },
        Context::cpu(), {}, {v.get()});
    for (int i = 0; i < 10; ++i)
      engine->push([&](RunContext) { ++done_ops; }, Context::cpu(), {v.get()}, {});
    v.release([&] { deleted_after_all = done_ops.load() == 11; });
    CHECK(!v);
  }  // returned while the first operation still blocks
  release = true;
  engine->wait_all();
  CHECK(deleted_after_all.load());
  CHECK(engine->pending() == 0);
}

TEST_CASE("a variable listed twice or as both read and write is handled once") {
  for (auto kind : {EngineKind::kThreaded, EngineKind::kNaive}) {
    auto engine = make(kind);
    VarHandle v = engine->new_var();
    int runs = 0;
    engine->push([&](RunContext) { ++runs; }, Context::cpu(), {v.get(), v.get()},
                 {v.get(), v.get()});
    engine->push([&](RunContext) { ++runs; }, Context::cpu(), {v.get(), nullptr}, {});
    engine->wait_all();
    CHECK(runs == 2);
  }
}

TEST_CASE("an operation on a GPU that does not exist fails at push time with a clear message") {
  auto engine = make(EngineKind::kThreaded);
  VarHandle v = engine->new_var();
  // gpu:7 exists on no machine this runs on (at most one GPU is lent).
  CHECK_THROWS_WITH_AS(engine->push([](RunContext) {}, Context::gpu(7), {}, {v.get()}),
                       doctest::Contains("gpu:7"), Error);
  // A negative id is no GPU either, on a machine with GPUs as well.
  CHECK_THROWS_AS(engine->push([](RunContext) {}, Context::gpu(-1), {}, {v.get()}), Error);
  CHECK(engine->pending() == 0);
}

// The rules by which GPU operations wait for each other's queued work,
// with stand-in events (stream_fence.h): no GPU needed.
namespace {
struct FakeEvent {
  const void* on;
  int id;
  const void* stream() const { return on; }
};
using Fence = StreamFence<FakeEvent>;
std::shared_ptr<const FakeEvent> event(const void* stream, int id) {
  return std::make_shared<const FakeEvent>(FakeEvent{stream, id});
}
std::vector<int> ids(const std::vector<Fence::EventPtr>& events) {
  std::vector<int> out;
  for (const auto& e : events) out.push_back(e->id);
  std::sort(out.begin(), out.end());
  return out;
}
const int kComputeTag = 1, kCopyTag = 2;
const void* const kCompute = &kComputeTag;
const void* const kCopy = &kCopyTag;
}  // namespace

TEST_CASE("stream fence: the same stream never waits, other streams and the host do") {
  Fence fence;
  CHECK(fence.empty());
  fence.write_finished(event(kCopy, 1));  // a batch copied on the copy stream
  CHECK(ids(fence.to_wait(kCopy, false)).empty());
  CHECK(ids(fence.to_wait(kCompute, false)) == std::vector<int>{1});
  CHECK(ids(fence.to_wait(nullptr, false)) == std::vector<int>{1});
  // Two compute reads: one event per stream is kept, the later one.
  fence.read_finished(event(kCompute, 2));
  fence.read_finished(event(kCompute, 3));
  CHECK(ids(fence.to_wait(kCompute, false)) == std::vector<int>{1});
  // The next copy into the buffer waits for the compute reads, not for its own stream.
  CHECK(ids(fence.to_wait(kCopy, true)) == std::vector<int>{3});
  CHECK(ids(fence.to_wait(nullptr, true)) == std::vector<int>{1, 3});
  // A host read adds nothing; a write leaves only its own work.
  fence.read_finished(nullptr);
  CHECK(ids(fence.to_wait(nullptr, true)) == std::vector<int>{1, 3});
  fence.write_finished(event(kCompute, 4));
  CHECK(ids(fence.to_wait(nullptr, true)) == std::vector<int>{4});
  CHECK(ids(fence.to_wait(kCompute, true)).empty());
  // A host write waited for everything: nothing is left.
  fence.write_finished(nullptr);
  CHECK(fence.empty());
  CHECK(fence.to_wait(kCopy, true).empty());
}

TEST_CASE("stream fence: reads from several streams are all waited for by a writer") {
  Fence fence;
  fence.read_finished(event(kCompute, 1));
  fence.read_finished(event(kCopy, 2));
  CHECK(ids(fence.to_wait(nullptr, false)).empty());  // no write queued
  CHECK(ids(fence.to_wait(nullptr, true)) == std::vector<int>{1, 2});
  CHECK(ids(fence.to_wait(kCompute, true)) == std::vector<int>{2});
}
