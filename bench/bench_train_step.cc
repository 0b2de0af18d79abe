// Heap allocations and time of the training step outside mx-train's logging:
// the loop of mx-train (read a batch, copy it into the bound arrays, forward,
// backward, one optimizer update per parameter, metrics) on a config's
// network and data, with a counting operator new.
//   bench_train_step [config.yaml] [steps]
// Prints, per step: allocations in each phase (the engine is waited for after
// each phase so that work a phase pushed is counted in it), and the step's
// time with and without those waits (phases one after the other, or
// overlapping as in mx-train).
#include <sys/resource.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <new>
#include <string>

#include "engine/engine.h"
#include "metric/metric.h"
#include "train/config.h"
#include "train/train_settings.h"
#include "train/trainer_setup.h"

namespace {
std::atomic<int64_t> g_allocations{0};
}

// Every operator new of the process (the engine's threads included) counts.
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

namespace {

using mx::Engine;

// CPU milliseconds of every thread of the process so far.
double cpu_ms() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  auto ms = [](const timeval& t) { return t.tv_sec * 1e3 + t.tv_usec / 1e3; };
  return ms(u.ru_utime) + ms(u.ru_stime);
}
using mx::NDArray;

struct Loop {
  mx::train::TrainSettings settings;
  std::unique_ptr<mx::DataIter> data;
  std::unique_ptr<mx::Executor> exe;
  std::vector<std::string> params;
  std::unique_ptr<mx::optim::Updater> updater;
  std::unique_ptr<mx::metric::CompositeMetric> metric;

  mx::DataBatch next() {
    auto b = data->next();
    if (!b) {
      data->reset();
      b = data->next();
    }
    return *b;
  }
  NDArray copy_in(const mx::DataBatch& b) {
    NDArray data_arg = exe->arg_dict().at(settings.data_name);
    NDArray label_arg = exe->arg_dict().at(settings.label_name);
    b.data.copy_to(data_arg);
    NDArray label = b.label;
    if (label.shape() != label_arg.shape()) label = label.reshape(label_arg.shape());
    label.copy_to(label_arg);
    return label;
  }
  void update() {
    for (size_t i = 0; i < params.size(); ++i)
      (*updater)(static_cast<int>(i), exe->grad_dict().at(params[i]),
                 exe->arg_dict().at(params[i]));
  }
};

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : "configs/lenet-fashion-mnist.yaml";
  const int steps = argc > 2 ? std::atoi(argv[2]) : 200;
  const auto config = mx::train::Config::load(path);
  Loop loop;
  loop.settings = mx::train::parse_train_settings(config);
  const auto network = mx::train::load_network(config);
  mx::train::resolve_inputs(network, loop.settings);
  loop.data = mx::train::make_train_data(config, loop.settings);
  loop.exe = mx::train::bind_for_training(network, loop.settings, *loop.data, loop.settings.ctx);
  loop.params = mx::train::parameter_names(network, loop.settings);
  mx::train::initialize_parameters(config, loop.settings, network, *loop.exe, loop.params);
  loop.updater = mx::train::make_updater(config, network, loop.params, loop.settings.batch_size);
  loop.metric = mx::metric::make_composite(loop.settings.metric_names);
  auto& engine = Engine::get();

  enum { kData, kCopy, kForward, kBackward, kUpdate, kMetric, kPhases };
  const char* names[kPhases] = {"data", "copy-in", "forward", "backward", "update", "metrics"};
  int64_t allocs[kPhases] = {};
  auto step = [&](bool waited) {
    int64_t before = g_allocations.load();
    auto phase_end = [&](int p) {
      if (!waited) return;
      engine.wait_all();
      const int64_t now = g_allocations.load();
      allocs[p] += now - before;
      before = now;
    };
    const mx::DataBatch b = loop.next();
    phase_end(kData);
    const NDArray label = loop.copy_in(b);
    phase_end(kCopy);
    loop.exe->forward(true);
    phase_end(kForward);
    loop.exe->backward();
    phase_end(kBackward);
    loop.update();
    phase_end(kUpdate);
    loop.metric->update({label}, {loop.exe->outputs()[0]});
    phase_end(kMetric);
  };

  for (int i = 0; i < 20; ++i) step(false);  // warm up: temp space, pools, caches
  engine.wait_all();
  const double waited_cpu_start = cpu_ms();
  const auto waited_start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step(true);
  engine.wait_all();
  const double waited_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - waited_start)
          .count();
  const double waited_cpu = cpu_ms() - waited_cpu_start;
  const int64_t free_run_before = g_allocations.load();
  const double free_cpu_start = cpu_ms();
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < steps; ++i) step(false);
  engine.wait_all();
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const int64_t free_run = g_allocations.load() - free_run_before;
  const double free_cpu = cpu_ms() - free_cpu_start;

  std::printf("%s, batch %d, %d steps\n", path.c_str(), loop.settings.batch_size, steps);
  std::printf("heap allocations per step, by phase (each phase waited for):\n");
  int64_t total = 0;
  for (int p = 0; p < kPhases; ++p) {
    std::printf("  %-10s %8.1f\n", names[p], static_cast<double>(allocs[p]) / steps);
    total += allocs[p];
  }
  std::printf("  %-10s %8.1f\n", "total", static_cast<double>(total) / steps);
  std::printf("with the waits: %.3f ms per step, %.3f ms CPU time per step\n", waited_ms / steps,
              waited_cpu / steps);
  std::printf(
      "without waits: %.1f allocations, %.3f ms per step, %.3f ms CPU time per step"
      " (%.0f samples/s)\n",
      static_cast<double>(free_run) / steps, ms / steps, free_cpu / steps,
      loop.settings.batch_size * steps * 1000.0 / ms);
  std::printf("(the metric's value, so that nothing is optimised away: %s %.4f)\n",
              loop.metric->get_all()[0].name.c_str(), loop.metric->get_all()[0].value);
  return 0;
}
