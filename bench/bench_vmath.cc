// Throughput of the vectorised math kernels per instruction set, one thread:
// nanoseconds per float32 element over an array that fits in L2.
//   bench_vmath [repeats]
// Each figure is the best of `repeats` passes (other processes only slow a
// pass down).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "op/vmath/vmath.h"

namespace vm = mx::op::vmath;

int main(int argc, char** argv) {
  const int repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  if (argc > 2 || repeats < 1) {  // --help, or not a positive count
    std::fprintf(stderr, "usage: bench_vmath [repeats >= 1, default 20]\n");
    return 2;
  }
  constexpr int64_t kN = 1 << 16;  // 256 KiB per array
  std::vector<float> x(kN), y(kN);
  for (int64_t i = 0; i < kN; ++i) x[i] = -8.0f + 16.0f * static_cast<float>(i) / kN;
  struct Fn {
    const char* name;
    vm::UnaryFn vm::Kernels::*kernel;
    bool positive;  // log: only positive arguments
  };
  const Fn fns[] = {
      {"exp", &vm::Kernels::exp, false},         {"expm1", &vm::Kernels::expm1, false},
      {"log", &vm::Kernels::log, true},          {"tanh", &vm::Kernels::tanh, false},
      {"sigmoid", &vm::Kernels::sigmoid, false}, {"softrelu", &vm::Kernels::softrelu, false},
      {"erf", &vm::Kernels::erf, false}};
  std::printf("ns per element (best of %d passes over %lld floats), active: %s\n", repeats,
              static_cast<long long>(kN), vm::isa_name(vm::active_isa()));
  std::printf("%-10s", "function");
  const vm::Isa isas[] = {vm::Isa::kScalar, vm::Isa::kAvx2, vm::Isa::kAvx512};
  for (vm::Isa isa : isas) std::printf("%10s", vm::isa_name(isa));
  std::printf("\n");
  double checksum = 0;
  for (const Fn& f : fns) {
    std::vector<float> in = x;
    if (f.positive)
      for (float& v : in) v = v + 8.5f;
    std::printf("%-10s", f.name);
    for (vm::Isa isa : isas) {
      if (!vm::supported(isa)) {
        std::printf("%10s", "-");
        continue;
      }
      const vm::UnaryFn fn = vm::kernels(isa).*f.kernel;
      double best = 1e30;
      for (int r = 0; r < repeats; ++r) {
        const auto start = std::chrono::steady_clock::now();
        fn(in.data(), y.data(), kN);
        const double ns =
            std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start)
                .count();
        best = std::min(best, ns / kN);
        checksum += y[static_cast<size_t>(r) % kN];
      }
      std::printf("%10.3f", best);
    }
    std::printf("\n");
  }
  std::printf("(checksum %g)\n", checksum);
  return 0;
}
