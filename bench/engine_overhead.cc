// Engine overhead: microseconds per pushed no-op and per link of a dependent
// chain, for the naive and the threaded engine. Not a test: timings are noisy.
//   bench_engine [--ops N] [--repeats R] [--threads T]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "base/threads.h"
#include "engine/engine.h"

using namespace mx;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Independent no-ops, each writing its own variable (from a set of 64): the
// cost of push + schedule + run + complete when nothing has to wait.
double independent(Engine& engine, int ops) {
  std::vector<VarHandle> vars;
  for (int i = 0; i < 64; ++i) vars.push_back(engine.new_var());
  engine.wait_all();
  auto start = Clock::now();
  for (int i = 0; i < ops; ++i)
    engine.push([](RunContext) {}, Context::cpu(), {}, {vars[static_cast<size_t>(i % 64)].get()});
  engine.wait_all();
  return seconds_since(start) / ops * 1e6;
}

// A chain: every no-op writes the same variable, so each waits for the one
// before it; measures the hand-over from one operation to the next.
double chain(Engine& engine, int ops) {
  VarHandle v = engine.new_var();
  engine.wait_all();
  auto start = Clock::now();
  for (int i = 0; i < ops; ++i) engine.push([](RunContext) {}, Context::cpu(), {}, {v.get()});
  engine.wait_all();
  return seconds_since(start) / ops * 1e6;
}

// Fan-in: reads of two variables written by the previous step (a diamond
// pattern, as in a graph with branches).
double diamond(Engine& engine, int ops) {
  VarHandle a = engine.new_var(), b = engine.new_var(), c = engine.new_var();
  engine.wait_all();
  auto start = Clock::now();
  for (int i = 0; i < ops / 3; ++i) {
    engine.push([](RunContext) {}, Context::cpu(), {c.get()}, {a.get()});
    engine.push([](RunContext) {}, Context::cpu(), {c.get()}, {b.get()});
    engine.push([](RunContext) {}, Context::cpu(), {a.get(), b.get()}, {c.get()});
  }
  engine.wait_all();
  return seconds_since(start) / (ops / 3 * 3) * 1e6;
}

double best_of(int repeats, const std::function<double()>& f) {
  double best = 1e30;
  for (int r = 0; r < repeats; ++r) best = std::min(best, f());
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int ops = 200000, repeats = 5, threads = thread_budget();
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    int value = std::atoi(argv[i + 1]);
    if (flag == "--ops")
      ops = value;
    else if (flag == "--repeats")
      repeats = value;
    else if (flag == "--threads")
      threads = value;
    else {
      std::fprintf(stderr, "usage: bench_engine [--ops N] [--repeats R] [--threads T]\n");
      return 2;
    }
  }
  if (ops < 3 || repeats < 1 || threads < 1) {
    std::fprintf(stderr, "bench_engine: --ops must be >= 3, --repeats and --threads >= 1\n");
    return 2;
  }
  std::printf("engine overhead, %d operations, best of %d runs, %d CPU worker thread(s)\n", ops,
              repeats, threads);
  std::printf("%-10s %22s %22s %22s\n", "engine", "independent us/op", "chain us/link",
              "diamond us/op");
  for (EngineKind kind : {EngineKind::kNaive, EngineKind::kThreaded}) {
    auto engine = Engine::create({kind, threads});
    double ind = best_of(repeats, [&] { return independent(*engine, ops); });
    double ch = best_of(repeats, [&] { return chain(*engine, ops); });
    double di = best_of(repeats, [&] { return diamond(*engine, ops); });
    std::printf("%-10s %22.3f %22.3f %22.3f\n", kind == EngineKind::kNaive ? "naive" : "threaded",
                ind, ch, di);
  }
  return 0;
}
