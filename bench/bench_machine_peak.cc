// What the CPU can do at most, as the ceiling that kernel timings are judged
// against: the float32 multiply-add rate (GFLOP/s, one FMA = 2 FLOPs) on 1
// and on N threads, per instruction set, and the memory read bandwidth on N
// threads over an array far larger than the caches.
//   bench_machine_peak [threads]   (default: MX_NUM_THREADS or the core count)
// Each figure is the best of several passes (other processes only slow a pass
// down). scripts/bench/conv_roofline.py takes the FMA peak from here.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

// Twelve independent accumulators: more than FMA latency x FMA ports on
// current x86 cores, so the loop is bound by FMA throughput alone.
constexpr int kChains = 12;
constexpr long kSteps = 20'000'000;

// One loop per instruction set: each needs its own target attribute and
// intrinsics, chosen at run time below.
__attribute__((target("avx512f"))) float fma_chains_avx512() {
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(1.0f + 1e-7f * static_cast<float>(i));
  const __m512 scale = _mm512_set1_ps(0.999999f), shift = _mm512_set1_ps(1e-7f);
  for (long s = 0; s < kSteps; ++s)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], scale, shift);
  for (int i = 1; i < kChains; ++i) acc[0] = _mm512_add_ps(acc[0], acc[i]);
  return _mm512_reduce_add_ps(acc[0]);
}

__attribute__((target("avx2,fma"))) float fma_chains_avx2() {
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(1.0f + 1e-7f * static_cast<float>(i));
  const __m256 scale = _mm256_set1_ps(0.999999f), shift = _mm256_set1_ps(1e-7f);
  for (long s = 0; s < kSteps; ++s)
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], scale, shift);
  float out[8];
  for (int i = 1; i < kChains; ++i) acc[0] = _mm256_add_ps(acc[0], acc[i]);
  _mm256_storeu_ps(out, acc[0]);
  float sum = 0;
  for (float v : out) sum += v;
  return sum;
}

// Runs `work` on `threads` threads at once; the best wall time of `passes`.
double best_seconds(int threads, int passes, const std::function<float(int)>& work,
                    float* checksum) {
  double best = 1e30;
  for (int p = 0; p < passes; ++p) {
    std::vector<float> results(static_cast<size_t>(threads));
    const auto start = Clock::now();
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { results[static_cast<size_t>(t)] = work(t); });
    for (auto& thread : pool) thread.join();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
    for (float r : results) *checksum += r;
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  if (const char* env = std::getenv("MX_NUM_THREADS")) threads = std::atoi(env);
  if (argc > 1) threads = std::atoi(argv[1]);
  if (threads < 1) {
    std::fprintf(stderr, "bench_machine_peak: threads must be a positive number\n");
    return 2;
  }
  float checksum = 0;
  struct Isa {
    const char* name;
    bool supported;
    float (*kernel)();
    int lanes;
  };
  __builtin_cpu_init();
  const Isa isas[] = {
      {"avx512", __builtin_cpu_supports("avx512f") != 0, fma_chains_avx512, 16},
      {"avx2", __builtin_cpu_supports("avx2") != 0 && __builtin_cpu_supports("fma") != 0,
       fma_chains_avx2, 8}};
  std::printf("float32 FMA peak (GFLOP/s, best of 3 passes)\n");
  for (const Isa& isa : isas) {
    if (!isa.supported) {
      std::printf("  %-7s not supported by this CPU\n", isa.name);
      continue;
    }
    const double flops = 2.0 * isa.lanes * kChains * static_cast<double>(kSteps);
    for (int n : {1, threads}) {
      const double s = best_seconds(
          n, 3, [&](int) { return isa.kernel(); }, &checksum);
      std::printf("  %-7s %2d thread%s %8.1f\n", isa.name, n, n == 1 ? " " : "s",
                  n * flops / s / 1e9);
      if (threads == 1) break;
    }
  }

  // Read bandwidth: each thread sums its own slice of a 512 MiB array.
  constexpr size_t kFloats = size_t{128} << 20;
  std::vector<float> array(kFloats, 1.0f);
  const size_t slice = kFloats / static_cast<size_t>(threads);
  const double s = best_seconds(
      threads, 3,
      [&](int t) {
        const float* p = array.data() + static_cast<size_t>(t) * slice;
        float sums[8] = {};
        for (size_t i = 0; i + 8 <= slice; i += 8)
          for (int k = 0; k < 8; ++k) sums[k] += p[i + static_cast<size_t>(k)];
        float sum = 0;
        for (float v : sums) sum += v;
        return sum;
      },
      &checksum);
  std::printf("memory read bandwidth, %d threads: %.1f GB/s\n", threads,
              static_cast<double>(slice * static_cast<size_t>(threads) * sizeof(float)) / s / 1e9);
  std::printf("(checksum %g)\n", static_cast<double>(checksum));
  return 0;
}
