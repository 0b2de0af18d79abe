// GFLOP/s of Convolution and FullyConnected, forward and backward, on the
// layer shapes of a CIFAR ResNet-18 (32x32 input) and of VGG-16 (224x224),
// next to the GEMM rate of the same machine measured in the same run: a
// 1024^3 sgemm through mx's gemm() (the thread budget, single-threaded
// OpenBLAS per thread, which is what the convolution uses) and through
// OpenBLAS's own threads. Each rate is also given by CPU time (the process's
// CPU seconds over the thread budget), which other processes on a shared
// machine disturb much less. Not a test: timings are noisy.
//   bench_ops [--net resnet|vgg|all] [--iters N] [--resnet-batch B] [--vgg-batch B]
//             [--only TEXT]
// The thread budget is MX_NUM_THREADS (default: the number of cores).
#include <cblas.h>

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
#include "op/blas.h"
#include "op/invoke.h"

using namespace mx;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string net = "all";
  int iters = 3;
  int64_t resnet_batch = 32;
  int64_t vgg_batch = 8;
  std::string only;  // run only layers whose name contains this
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// CPU time of the whole process (all threads): robust to other processes
// on a shared machine, blind to threads of ours that wait.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// The best wall-clock and the best CPU time of `iters` runs of fn (after one
// warm-up run). The CPU time is divided by the thread budget, so that a
// rate computed from it is what the budget would reach without others.
struct Timing {
  double wall = 1e30, cpu = 1e30;
};

template <typename Fn>
Timing best_time(int iters, Fn&& fn) {
  fn();
  Timing best;
  for (int i = 0; i < iters; ++i) {
    const auto start = Clock::now();
    const double cpu_start = cpu_seconds();
    fn();
    best.wall = std::min(best.wall, seconds_since(start));
    best.cpu = std::min(best.cpu, (cpu_seconds() - cpu_start) / parallel_threads());
  }
  return best;
}

NDArray filled(const Shape& shape, uint32_t seed) {
  std::vector<float> v(static_cast<size_t>(shape.size()));
  uint32_t s = seed * 2654435761u + 1;
  for (auto& x : v) {
    s = s * 1664525u + 1013904223u;
    x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) - 0.5f;
  }
  return NDArray::from_vector<float>(shape, std::move(v));
}

struct Layer {
  std::string name;
  std::string op;
  op::AttrMap attrs;
  std::vector<Shape> inputs;
  double flops;  // forward; backward (data + weight gradients) is twice this
  int count;     // how many layers of the network have this shape
};

Layer conv(const std::string& name, int64_t n, int64_t c, int64_t f, int64_t size, int64_t k,
           int64_t stride, int count) {
  const int64_t pad = k / 2, out = (size + 2 * pad - k) / stride + 1;
  Layer l;
  l.name = name;
  l.op = "Convolution";
  l.attrs = {{"kernel", Shape{k, k}.to_string()},
             {"num_filter", std::to_string(f)},
             {"stride", Shape{stride, stride}.to_string()},
             {"pad", Shape{pad, pad}.to_string()},
             {"no_bias", "True"}};
  l.inputs = {Shape{n, c, size, size}, Shape{f, c, k, k}};
  l.flops = 2.0 * static_cast<double>(n * f * out * out * c * k * k);
  l.count = count;
  return l;
}

Layer fc(const std::string& name, int64_t n, int64_t in, int64_t out, int count) {
  Layer l;
  l.name = name;
  l.op = "FullyConnected";
  l.attrs = {{"num_hidden", std::to_string(out)}};
  l.inputs = {Shape{n, in}, Shape{out, in}, Shape{out}};
  l.flops = 2.0 * static_cast<double>(n * in * out);
  l.count = count;
  return l;
}

std::vector<Layer> resnet18(int64_t n) {
  return {conv("conv 3->64, 32px", n, 3, 64, 32, 3, 1, 1),
          conv("conv 64->64, 32px", n, 64, 64, 32, 3, 1, 4),
          conv("conv 64->128 /2, 32px", n, 64, 128, 32, 3, 2, 1),
          conv("conv 128->128, 16px", n, 128, 128, 16, 3, 1, 3),
          conv("conv 1x1 64->128 /2", n, 64, 128, 32, 1, 2, 1),
          conv("conv 128->256 /2, 16px", n, 128, 256, 16, 3, 2, 1),
          conv("conv 256->256, 8px", n, 256, 256, 8, 3, 1, 3),
          conv("conv 1x1 128->256 /2", n, 128, 256, 16, 1, 2, 1),
          conv("conv 256->512 /2, 8px", n, 256, 512, 8, 3, 2, 1),
          conv("conv 512->512, 4px", n, 512, 512, 4, 3, 1, 3),
          conv("conv 1x1 256->512 /2", n, 256, 512, 8, 1, 2, 1),
          fc("fc 512->10", n, 512, 10, 1)};
}

std::vector<Layer> vgg16(int64_t n) {
  return {conv("conv 3->64, 224px", n, 3, 64, 224, 3, 1, 1),
          conv("conv 64->64, 224px", n, 64, 64, 224, 3, 1, 1),
          conv("conv 64->128, 112px", n, 64, 128, 112, 3, 1, 1),
          conv("conv 128->128, 112px", n, 128, 128, 112, 3, 1, 1),
          conv("conv 128->256, 56px", n, 128, 256, 56, 3, 1, 1),
          conv("conv 256->256, 56px", n, 256, 256, 56, 3, 1, 2),
          conv("conv 256->512, 28px", n, 256, 512, 28, 3, 1, 1),
          conv("conv 512->512, 28px", n, 512, 512, 28, 3, 1, 2),
          conv("conv 512->512, 14px", n, 512, 512, 14, 3, 1, 3),
          fc("fc 25088->4096", n, 25088, 4096, 1),
          fc("fc 4096->4096", n, 4096, 4096, 1),
          fc("fc 4096->1000", n, 4096, 1000, 1)};
}

struct Rates {
  Timing fwd, bwd;
};

Rates run_layer(const Layer& l, int iters) {
  op::OpInstance inst(l.op, l.attrs, l.name);
  std::vector<NDArray> inputs;
  for (size_t i = 0; i < l.inputs.size(); ++i)
    inputs.push_back(filled(l.inputs[i], static_cast<uint32_t>(i + 1)));
  std::vector<NDArray> outputs = op::invoke(inst, inputs);
  std::vector<NDArray> grads;
  for (const auto& s : l.inputs) grads.emplace_back(s);
  NDArray dy = filled(outputs[0].shape(), 9);
  std::vector<op::OpReq> write(outputs.size(), op::OpReq::kWrite);
  std::vector<op::OpReq> gwrite(grads.size(), op::OpReq::kWrite);
  Engine::get().wait_all();
  Rates r;
  r.fwd = best_time(iters, [&] {
    op::invoke_forward(inst, inputs, {}, outputs, write, false);
    Engine::get().wait_all();
  });
  r.bwd = best_time(iters, [&] {
    op::invoke_backward(inst, {dy}, inputs, outputs, {}, grads, gwrite);
    Engine::get().wait_all();
  });
  return r;
}

// GFLOP/s of a 1024^3 single-precision product (wall clock and CPU time).
struct GemmRate {
  double wall, cpu;
};

GemmRate gemm_rate(bool openblas_threads, int iters) {
  const int64_t n = 1024;
  std::vector<float> a(static_cast<size_t>(n * n), 0.5f), b(a), c(a);
  auto product = [&] {
    if (openblas_threads) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                  n, 0.0f, c.data(), n);
    } else {
      op::gemm(false, false, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    }
  };
  if (openblas_threads) openblas_set_num_threads(parallel_threads());
  const Timing t = best_time(iters, product);
  openblas_set_num_threads(1);  // back to what mx runs with
  const double flops = 2.0 * static_cast<double>(n * n * n);
  return {flops / t.wall / 1e9, flops / t.cpu / 1e9};
}

void report(const char* title, std::vector<Layer> layers, int iters, double peak,
            const std::string& only) {
  std::erase_if(layers, [&](const Layer& l) { return l.name.find(only) == std::string::npos; });
  std::printf("\n### %s\n\n", title);
  std::printf(
      "| layer | input | GFLOP fwd | fwd ms | fwd GFLOP/s | bwd ms | bwd GFLOP/s | fwd %% of "
      "sgemm | bwd %% of sgemm | fwd GFLOP/s (CPU time) | bwd GFLOP/s (CPU time) |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  double total_flops = 0;
  Timing total_fwd{0, 0}, total_bwd{0, 0};
  auto row = [&](const std::string& name, const std::string& input, double flops, Timing fwd,
                 Timing bwd) {
    const double f = flops / fwd.wall / 1e9, b = 2 * flops / bwd.wall / 1e9;
    std::printf("| %s | %s | %.2f | %.1f | %.1f | %.1f | %.1f | %.0f%% | %.0f%% | %.1f | %.1f |\n",
                name.c_str(), input.c_str(), flops / 1e9, fwd.wall * 1e3, f, bwd.wall * 1e3, b,
                100 * f / peak, 100 * b / peak, flops / fwd.cpu / 1e9, 2 * flops / bwd.cpu / 1e9);
    std::fflush(stdout);
  };
  for (const auto& l : layers) {
    const Rates r = run_layer(l, iters);
    const std::string name = l.count > 1 ? l.name + " (x" + std::to_string(l.count) + ")" : l.name;
    row(name, l.inputs[0].to_string(), l.flops, r.fwd, r.bwd);
    total_flops += l.count * l.flops;
    total_fwd.wall += l.count * r.fwd.wall;
    total_fwd.cpu += l.count * r.fwd.cpu;
    total_bwd.wall += l.count * r.bwd.wall;
    total_bwd.cpu += l.count * r.bwd.cpu;
  }
  if (layers.size() > 1) row("**all layers**", "", total_flops, total_fwd, total_bwd);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    auto value = [&](const char* name) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_ops: %s needs a value\n", name);
        std::exit(2);
      }
      return std::string(argv[++i]);
    };
    if (!std::strcmp(argv[i], "--net")) {
      o.net = value("--net");
    } else if (!std::strcmp(argv[i], "--iters")) {
      o.iters = std::max(1, std::atoi(value("--iters").c_str()));
    } else if (!std::strcmp(argv[i], "--resnet-batch")) {
      o.resnet_batch = std::max(1, std::atoi(value("--resnet-batch").c_str()));
    } else if (!std::strcmp(argv[i], "--vgg-batch")) {
      o.vgg_batch = std::max(1, std::atoi(value("--vgg-batch").c_str()));
    } else if (!std::strcmp(argv[i], "--only")) {
      o.only = value("--only");
    } else {
      std::fprintf(stderr,
                   "usage: bench_ops [--net resnet|vgg|all] [--iters N] [--resnet-batch B] "
                   "[--vgg-batch B] [--only TEXT]\n");
      std::exit(2);
    }
  }
  if (o.net != "resnet" && o.net != "vgg" && o.net != "all") {
    std::fprintf(stderr, "bench_ops: --net must be resnet, vgg or all\n");
    std::exit(2);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  const GemmRate mx_gemm = gemm_rate(false, 5);
  const GemmRate blas_gemm = gemm_rate(true, 5);
  std::printf("threads: %d\n", parallel_threads());
  std::printf("sgemm 1024^3 through mx::op::gemm: %.1f GFLOP/s (%.1f by CPU time)\n", mx_gemm.wall,
              mx_gemm.cpu);
  std::printf("sgemm 1024^3 with OpenBLAS's own threads: %.1f GFLOP/s\n", blas_gemm.wall);
  const double peak = std::max(mx_gemm.wall, blas_gemm.wall);
  if (o.net != "vgg") {
    const std::string title =
        "ResNet-18 (CIFAR, 32x32), batch " + std::to_string(o.resnet_batch) + ", float32";
    report(title.c_str(), resnet18(o.resnet_batch), o.iters, peak, o.only);
  }
  if (o.net != "resnet") {
    const std::string title =
        "VGG-16 (224x224), batch " + std::to_string(o.vgg_batch) + ", float32";
    report(title.c_str(), vgg16(o.vgg_batch), std::max(1, o.iters - 1), peak, o.only);
  }
  return 0;
}
