// Milliseconds of the RNN operator's passes (forward in training, backward,
// forward in inference) on the shapes of a character-level language model
// (2 layers of 256 units over 64-dimensional embeddings, 64 steps, batch
// 32: scripts/bench/charlstm_vs_pytorch.py trains it) and a few others, on
// each CPU implementation: the reference kernels (rnn_driver.h with
// OpenBLAS) and oneDNN's RNN primitives (op/dnnl/dnnl_rnn.h), one after the
// other on each case (alternating pass by pass, each slowed the other:
// OpenMP's threads spin on after a oneDNN call while mx's own pool runs the
// reference kernels); medians of --iters runs after one warm-up run, by wall clock
// and by the process's CPU time over the thread budget (which others on a
// shared machine disturb less). Not a test.
//   bench_rnn [--iters N] [--impl reference|dnnl|both] [--only TEXT]
// The thread budget is MX_NUM_THREADS (default: the number of cores).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "engine/engine.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/invoke.h"
#include "op/nn/rnn_param.h"

using namespace mx;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  int iters = 10;
  std::string impl = op::dnnl_built() ? "both" : "reference";
  std::string only;
};

struct Case {
  std::string name;
  op::AttrMap attrs;
  int64_t steps, batch, input;
};

std::vector<Case> cases() {
  auto rnn = [](const char* mode, int layers, int units, bool bidirectional) {
    return op::AttrMap{{"mode", mode},
                       {"state_size", std::to_string(units)},
                       {"num_layers", std::to_string(layers)},
                       {"bidirectional", bidirectional ? "True" : "False"},
                       {"state_outputs", "True"}};
  };
  return {{"char-LSTM 2x256, in 64, T64 N32", rnn("lstm", 2, 256, false), 64, 32, 64},
          {"GRU 2x256, in 64, T64 N32", rnn("gru", 2, 256, false), 64, 32, 64},
          {"tanh RNN 2x256, in 64, T64 N32", rnn("rnn_tanh", 2, 256, false), 64, 32, 64},
          {"LSTM 2x256 p=0.2, in 64, T64 N32",
           [&] {
             auto a = rnn("lstm", 2, 256, false);
             a["p"] = "0.2";
             return a;
           }(),
           64, 32, 64},
          {"bi-LSTM 1x256, in 64, T64 N32", rnn("lstm", 1, 256, true), 64, 32, 64},
          {"LSTM 2x650 (PTB medium), in 650, T35 N20", rnn("lstm", 2, 650, false), 35, 20, 650}};
}

NDArray filled(const Shape& shape, uint32_t seed, float scale) {
  std::vector<float> v(static_cast<size_t>(shape.size()));
  uint32_t s = seed * 2654435761u + 1;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = scale * (static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f);
  }
  return NDArray::from_vector<float>(shape, std::move(v));
}

double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

struct Timing {
  double wall, cpu;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The arrays of one case, and its passes on the implementation chosen.
struct Bench {
  op::OpInstance inst;
  std::vector<NDArray> inputs, outputs, out_grads, grads;

  explicit Bench(const Case& c) : inst("RNN", c.attrs) {
    const auto p = op::RnnParam::from_strings(c.attrs, "RNN");
    const op::RnnGeometry g(p, c.steps, c.batch, c.input);
    inputs = {filled(Shape{c.steps, c.batch, c.input}, 1, 2.0f),
              filled(Shape{g.parameter_count()}, 2, 0.2f),
              filled(Shape{g.states(), c.batch, g.P}, 3, 1.0f)};
    if (p.lstm()) inputs.push_back(filled(Shape{g.states(), c.batch, g.H}, 4, 1.0f));
    outputs = op::invoke(inst, inputs, {}, true);
    for (int k = 0; k < inst.num_visible_outputs(); ++k)
      out_grads.push_back(filled(outputs[static_cast<size_t>(k)].shape(), 5 + k, 0.1f));
    for (const auto& a : inputs) grads.push_back(NDArray::zeros(a.shape()));
    Engine::get().wait_all();
  }
  // Seconds of one pass: 0 forward (training), 1 backward, 2 forward (inference).
  Timing pass(int which) {
    const std::vector<op::OpReq> write(outputs.size(), op::OpReq::kWrite);
    const auto start = Clock::now();
    const double cpu_start = cpu_seconds();
    if (which == 1)
      op::invoke_backward(inst, out_grads, inputs, outputs, {}, grads,
                          std::vector<op::OpReq>(inputs.size(), op::OpReq::kWrite));
    else
      op::invoke_forward(inst, inputs, {}, outputs, write, which == 0);
    Engine::get().wait_all();
    return {std::chrono::duration<double>(Clock::now() - start).count(),
            (cpu_seconds() - cpu_start) / parallel_threads()};
  }
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* flag) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_rnn: %s needs a value\n", flag);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--iters")) {
      o.iters = std::max(1, std::atoi(value("--iters").c_str()));
    } else if (!std::strcmp(argv[i], "--impl")) {
      o.impl = value("--impl");
    } else if (!std::strcmp(argv[i], "--only")) {
      o.only = value("--only");
    } else {
      std::fprintf(stderr,
                   "usage: bench_rnn [--iters N] [--impl reference|dnnl|both] "
                   "[--only TEXT]\n");
      std::exit(2);
    }
  }
  if (o.impl != "reference" && o.impl != "dnnl" && o.impl != "both") {
    std::fprintf(stderr, "bench_rnn: --impl must be reference, dnnl or both\n");
    std::exit(2);
  }
  if (o.impl != "reference" && !op::dnnl_built()) {
    std::fprintf(stderr, "bench_rnn: --impl %s needs mx built with oneDNN (MX_USE_DNNL)\n",
                 o.impl.c_str());
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  // One engine worker, as mx-train trains recurrent networks: a second
  // worker calling oneDNN would own a second OpenMP team, and libgomp would
  // stop spinning between the RNN's short parallel regions
  // (MX_CPU_WORKER_NTHREADS=2 shows that).
  Engine::prefer_cpu_workers(1);
  std::vector<bool> impls;  // true: oneDNN
  if (o.impl != "dnnl") impls.push_back(false);
  if (o.impl != "reference") impls.push_back(true);
  std::printf(
      "| case | implementation | forward, training (ms) | backward (ms) | "
      "forward, inference (ms) | the same by CPU time (ms) |\n"
      "| --- | --- | ---: | ---: | ---: | ---: |\n");
  for (const Case& c : cases()) {
    if (!o.only.empty() && c.name.find(o.only) == std::string::npos) continue;
    Bench bench(c);
    // [impl][pass]: wall-clock and CPU seconds
    using Runs = std::vector<std::vector<std::vector<double>>>;
    Runs times(impls.size(), std::vector<std::vector<double>>(3)), cpu = times;
    for (size_t i = 0; i < impls.size(); ++i)
      for (int it = 0; it <= o.iters; ++it) {
        op::ScopedDnnl use(impls[i]);
        for (int which = 0; which < 3; ++which) {
          // A backward pass follows the training pass of the same implementation.
          if (which == 1) bench.pass(0);
          const Timing t = bench.pass(which);
          if (it == 0) continue;
          times[i][static_cast<size_t>(which)].push_back(t.wall);
          cpu[i][static_cast<size_t>(which)].push_back(t.cpu);
        }
      }
    for (size_t i = 0; i < impls.size(); ++i)
      std::printf("| %s | %s | %.1f | %.1f | %.1f | %.1f / %.1f / %.1f |\n", c.name.c_str(),
                  impls[i] ? "oneDNN" : "reference", 1e3 * median(times[i][0]),
                  1e3 * median(times[i][1]), 1e3 * median(times[i][2]), 1e3 * median(cpu[i][0]),
                  1e3 * median(cpu[i][1]), 1e3 * median(cpu[i][2]));
    std::fflush(stdout);
  }
  return 0;
}
