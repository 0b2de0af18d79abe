// Time of one optimizer update on the CPU: every optimizer on a 4M-element
// float32 parameter, the engine waited for after each update.
//   bench_optimizer [updates]
// Prints per optimizer the wall and CPU milliseconds per update.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "ndarray/ndarray.h"
#include "optim/optimizer.h"

namespace {

double cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace mx;
  const int updates = argc > 1 ? std::atoi(argv[1]) : 50;
  const int64_t n = int64_t{1} << 22;
  const std::vector<std::pair<std::string, std::map<std::string, std::string>>> cases = {
      {"sgd", {{"momentum", "0.9"}, {"wd", "1e-4"}}},
      {"nag", {{"momentum", "0.9"}, {"wd", "1e-4"}}},
      {"adam", {{"wd", "1e-4"}, {"clip_gradient", "1"}}},
      {"adamw", {{"wd", "1e-2"}}},
      {"rmsprop", {{"centered", "True"}}},
      {"adagrad", {}},
  };
  NDArray grad = NDArray::full({n}, 0.01);
  for (const auto& [name, params] : cases) {
    optim::Updater updater(optim::make_optimizer(name, params));
    NDArray weight = NDArray::full({n}, 0.5);
    updater(0, grad, weight);  // creates the state
    Engine::get().wait_all();
    const auto start = std::chrono::steady_clock::now();
    const double cpu_start = cpu_seconds();
    for (int u = 0; u < updates; ++u) {
      updater(0, grad, weight);
      Engine::get().wait_all();
    }
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double cpu = cpu_seconds() - cpu_start;
    std::printf("%-8s %8.3f ms wall  %8.3f ms CPU per update of %lld floats\n", name.c_str(),
                1e3 * wall / updates, 1e3 * cpu / updates, static_cast<long long>(n));
  }
  return 0;
}
