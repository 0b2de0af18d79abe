// The process-wide thread settings a run asks for: how many CPU engine
// workers take operations, and how many OpenMP threads each oneDNN call
// gets. They belong to the process, not to the objects that run a network,
// so the programs (mx-train, mx-predict, mx-export) apply them before they
// build a Trainer or a Predictor; the runtime configuration's
// MX_CPU_WORKER_NTHREADS and MX_DNNL_THREADS win over both when set. A
// library user who builds those objects itself keeps the engine's and
// oneDNN's defaults (every worker, the whole budget per call), or applies
// these too.
#pragma once

#include <optional>

#include "base/context.h"
#include "train/config.h"

namespace mx::train {

struct ProcessThreads {
  // Engine::prefer_cpu_workers; nullopt: leave the engine as it is.
  std::optional<int> cpu_workers;
  // op::set_dnnl_call_threads (0: the whole budget); nullopt: leave it.
  std::optional<int> dnnl_call_threads;
};

// Training with `config`: every CPU worker (optimizer updates and copies
// overlap the next kernels), except one for a recurrent network on one CPU
// device with oneDNN; and, when several CPU devices train side by side, each
// oneDNN call gets budget / devices threads. Throws what parsing the
// config's train settings throws (as the Trainer would first); a network
// that does not load counts as not recurrent, and the Trainer reports it.
ProcessThreads training_threads(const Config& config);

// Inference on `ctx`: one CPU worker on the CPU (each operation runs over
// the whole budget, and one worker keeps OpenMP's threads warm); nothing on
// a GPU.
ProcessThreads inference_threads(Context ctx);

void apply_process_threads(const ProcessThreads& threads);

}  // namespace mx::train
