// The process-wide thread choices the programs make before they build a
// Trainer or a Predictor (train/process_threads.h): what a run asks for, and
// that applying it reaches the engine and oneDNN unless the runtime
// configuration decided.
#include <doctest/doctest.h>

#include "base/threads.h"
#include "op/dnnl/dnnl_switch.h"
#include "train/config.h"
#include "train/process_threads.h"

using namespace mx;
using namespace mx::train;

namespace {

const char* kDense = R"(
network:
  layers:
    - {op: FullyConnected, name: fc, num_hidden: 4}
    - {op: SoftmaxOutput, name: softmax}
)";

const char* kRecurrent = R"(
network:
  layers:
    - {op: Embedding, name: embed, input_dim: 12, output_dim: 5}
    - {op: RNN, name: lstm, mode: lstm, state_size: 6, num_layers: 1, layout: NTC}
    - {op: Reshape, name: flat, shape: [-1, 6]}
    - {op: FullyConnected, name: fc, num_hidden: 12}
    - {op: SoftmaxOutput, name: softmax}
)";

ProcessThreads training(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  return training_threads(Config::from_string(yaml, "cfg.yaml", overrides));
}

}  // namespace

TEST_CASE("training keeps every CPU worker and gives each oneDNN call the whole budget") {
  const ProcessThreads t = training(kDense);
  CHECK(t.cpu_workers == thread_budget());
  CHECK(t.dnnl_call_threads == 0);
}

TEST_CASE("CPU replicas share the budget among their oneDNN calls") {
  const ProcessThreads t = training(kDense, {"train.devices=[cpu:0, cpu:1]"});
  CHECK(t.dnnl_call_threads == std::max(1, thread_budget() / 2));
  CHECK(t.cpu_workers == thread_budget());
}

TEST_CASE("a recurrent network on one CPU device trains on one worker when oneDNN runs it") {
  {
    op::ScopedDnnl dnnl(true);
    CHECK(training(kRecurrent).cpu_workers == (op::dnnl_built() ? 1 : thread_budget()));
    // Several devices: every worker.
    CHECK(training(kRecurrent, {"train.devices=[cpu:0, cpu:1]"}).cpu_workers == thread_budget());
  }
  op::ScopedDnnl reference(false);
  CHECK(training(kRecurrent).cpu_workers == thread_budget());
}

TEST_CASE("a network that does not load is left to the Trainer to report") {
  const ProcessThreads t = training("symbol: no-such-symbol.json\n");
  CHECK(t.cpu_workers == thread_budget());
}

TEST_CASE("inference takes one CPU worker on the CPU and changes nothing for a GPU") {
  const ProcessThreads cpu = inference_threads(Context::cpu());
  CHECK(cpu.cpu_workers == 1);
  CHECK_FALSE(cpu.dnnl_call_threads.has_value());
  const ProcessThreads gpu = inference_threads(Context::gpu(0));
  CHECK_FALSE(gpu.cpu_workers.has_value());
  CHECK_FALSE(gpu.dnnl_call_threads.has_value());
}

TEST_CASE("applying reaches oneDNN's call threads") {
  apply_process_threads({std::nullopt, 1});
  CHECK(op::dnnl_call_threads() == 1);
  apply_process_threads({std::nullopt, std::nullopt});  // leaves it
  CHECK(op::dnnl_call_threads() == 1);
  apply_process_threads({std::nullopt, 0});
  CHECK(op::dnnl_call_threads() == 0);
  // The engine's workers: prefer_cpu_workers (unless MX_CPU_WORKER_NTHREADS is set).
  CHECK_NOTHROW(apply_process_threads({thread_budget(), std::nullopt}));
}
