#include "train/process_threads.h"

#include <algorithm>
#include <exception>

#include "base/threads.h"
#include "engine/engine.h"
#include "graph/node.h"
#include "op/dnnl/dnnl_switch.h"
#include "op/registry.h"
#include "train/train_settings.h"
#include "train/trainer_setup.h"

namespace mx::train {
namespace {

// Whether one engine worker trains the network faster than several: one
// device on the CPU with recurrent layers on oneDNN. Those run thousands of
// short OpenMP parallel regions per batch (each step's GEMM and cell), and
// a second worker that calls oneDNN owns a second OpenMP team: libgomp then
// manages more threads than cores, stops spinning between regions and each
// region pays a futex wake-up (an LSTM layer's forward pass took 2.1 times
// as long; the char-LSTM of scripts/bench/charlstm_vs_pytorch.py trained
// 1.36 times faster on one worker: docs/benchmarks.md, "Recurrent layers").
bool trains_best_on_one_worker(const Config& config, const TrainSettings& settings) {
  if (settings.devices.size() != 1 || settings.devices[0].is_gpu() || !op::dnnl_enabled())
    return false;
  graph::Symbol symbol;
  try {
    symbol = load_network(config);
  } catch (const std::exception&) {
    return false;  // the Trainer reports it where it always has
  }
  for (const auto& node : graph::topo_order(symbol.outputs()))
    if (!node->is_variable() && node->op->def().name == "RNN") return true;
  return false;
}

}  // namespace

ProcessThreads training_threads(const Config& config) {
  const TrainSettings settings = parse_train_settings(config);
  const auto devices = static_cast<int>(settings.devices.size());
  ProcessThreads threads;
  // CPU replicas run side by side: each oneDNN call gets its share of the
  // cores rather than all of them (two single-threaded LeNet replicas train
  // 10-30% faster than one on two threads, docs/benchmarks.md).
  threads.dnnl_call_threads =
      devices > 1 && !settings.devices[0].is_gpu() ? std::max(1, thread_budget() / devices) : 0;
  // Training keeps every CPU worker (a Predictor's program may have asked
  // for one): optimizer updates and copies overlap the next kernels, and
  // ResNet-18 CIFAR trained 5-10% slower on one worker despite OpenMP's
  // warmer threads (Engine::set_active_cpu_workers); recurrent networks are
  // the exception.
  threads.cpu_workers = trains_best_on_one_worker(config, settings) ? 1 : thread_budget();
  return threads;
}

ProcessThreads inference_threads(Context ctx) {
  // Inference runs one operation after another, each over the whole thread
  // budget: one CPU worker keeps OpenMP's threads warm (LeNet at batch 1
  // 3x faster, Engine::set_active_cpu_workers).
  ProcessThreads threads;
  if (ctx.kind() == DeviceKind::kCPU) threads.cpu_workers = 1;
  return threads;
}

void apply_process_threads(const ProcessThreads& threads) {
  if (threads.dnnl_call_threads) op::set_dnnl_call_threads(*threads.dnnl_call_threads);
  if (threads.cpu_workers) Engine::prefer_cpu_workers(*threads.cpu_workers);
}

}  // namespace mx::train
