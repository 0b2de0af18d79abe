// GFLOP/s of Convolution and FullyConnected (and the time of Pooling and
// BatchNorm), forward and backward, on the layer shapes of LeNet (28x28), a
// CIFAR ResNet-18 (32x32 input), ResNet-50 (224x224) and VGG-16 (224x224),
// next to the GEMM rate of the same machine measured in the same run: a
// 1024^3 sgemm through mx's gemm() (oneDNN's sgemm when oneDNN is on, else
// single-threaded OpenBLAS per thread of the budget, which is what the
// reference convolution uses) and through OpenBLAS's own threads. Each rate
// is also given by CPU time (the process's CPU seconds over the thread
// budget), which other processes on a shared machine disturb much less.
// --net gemm times mx's gemm() on the products of a small transformer (the
// char-GPT of configs/chargpt-fortunes.yaml), OpenBLAS against oneDNN;
// --net elemwise its element-wise operators, in nanoseconds per element.
// Not a test: timings are noisy.
//   bench_ops [--net lenet|resnet|resnet50|vgg|gemm|elemwise|all] [--iters N] [--lenet-batch B]
//             [--resnet-batch B] [--resnet50-batch B] [--vgg-batch B] [--only TEXT]
//             [--impl reference|dnnl|both]
// --impl picks the CPU kernels (op/dnnl/dnnl_switch.h): the OpenBLAS/im2col
// reference, oneDNN, or both side by side (the default when built with oneDNN).
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
#include "op/dnnl/dnnl_switch.h"
#include "op/invoke.h"

using namespace mx;
using Clock = std::chrono::steady_clock;

namespace {

struct Options {
  std::string net = "all";
  std::string impl = op::dnnl_built() ? "both" : "reference";
  int iters = 3;
  int64_t lenet_batch = 64;
  int64_t resnet_batch = 32;
  int64_t resnet50_batch = 8;
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
  std::vector<Shape> aux;  // BatchNorm's moving statistics
  double flops;            // forward; backward (data + weight gradients) is twice this
  int count;               // how many layers of the network have this shape
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

Layer conv_valid(const std::string& name, int64_t n, int64_t c, int64_t f, int64_t size, int64_t k,
                 int count) {
  Layer l = conv(name, n, c, f, size, k, 1, count);
  const int64_t out = size - k + 1;
  l.attrs.erase("pad");
  l.attrs["no_bias"] = "False";
  l.inputs.push_back(Shape{f});
  l.flops = 2.0 * static_cast<double>(n * f * out * out * c * k * k);
  return l;
}

// Pooling and BatchNorm: FLOPs counted as one per input element.
Layer pool(const std::string& name, int64_t n, int64_t c, int64_t size, op::AttrMap attrs,
           int count) {
  Layer l;
  l.name = name;
  l.op = "Pooling";
  l.attrs = std::move(attrs);
  l.inputs = {Shape{n, c, size, size}};
  l.flops = static_cast<double>(n * c * size * size);
  l.count = count;
  return l;
}

Layer batch_norm(const std::string& name, int64_t n, int64_t c, int64_t size, int count) {
  Layer l;
  l.name = name;
  l.op = "BatchNorm";
  l.attrs = {{"fix_gamma", "False"}};
  l.inputs = {Shape{n, c, size, size}, Shape{c}, Shape{c}};
  l.aux = {Shape{c}, Shape{c}};
  l.flops = static_cast<double>(n * c * size * size);
  l.count = count;
  return l;
}

std::vector<Layer> lenet(int64_t n) {
  const op::AttrMap max2{{"kernel", "(2, 2)"}, {"stride", "(2, 2)"}, {"pool_type", "max"}};
  return {conv_valid("conv1 1->20 5x5, 28px", n, 1, 20, 28, 5, 1),
          pool("maxpool 2x2, 20x24px", n, 20, 24, max2, 1),
          conv_valid("conv2 20->50 5x5, 12px", n, 20, 50, 12, 5, 1),
          pool("maxpool 2x2, 50x8px", n, 50, 8, max2, 1),
          fc("fc1 800->500", n, 800, 500, 1),
          fc("fc2 500->10", n, 500, 10, 1)};
}

// ResNet-50 v1 (224x224): the distinct convolution shapes of its stages.
std::vector<Layer> resnet50(int64_t n) {
  return {conv("conv1 7x7 3->64 /2", n, 3, 64, 224, 7, 2, 1),
          batch_norm("bn 64, 112px", n, 64, 112, 1),
          pool("maxpool 3x3 /2, 112px", n, 64, 112,
               {{"kernel", "(3, 3)"}, {"stride", "(2, 2)"}, {"pad", "(1, 1)"}}, 1),
          conv("1x1 64->64, 56px", n, 64, 64, 56, 1, 1, 1),
          conv("3x3 64->64, 56px", n, 64, 64, 56, 3, 1, 3),
          conv("1x1 64->256, 56px", n, 64, 256, 56, 1, 1, 4),
          conv("1x1 256->64, 56px", n, 256, 64, 56, 1, 1, 2),
          conv("1x1 256->128, 56px", n, 256, 128, 56, 1, 1, 1),
          conv("3x3 128->128 /2, 56px", n, 128, 128, 56, 3, 2, 1),
          conv("3x3 128->128, 28px", n, 128, 128, 28, 3, 1, 3),
          conv("1x1 128->512, 28px", n, 128, 512, 28, 1, 1, 4),
          conv("1x1 512->128, 28px", n, 512, 128, 28, 1, 1, 3),
          conv("3x3 256->256, 14px", n, 256, 256, 14, 3, 1, 5),
          conv("1x1 256->1024, 14px", n, 256, 1024, 14, 1, 1, 6),
          conv("1x1 1024->256, 14px", n, 1024, 256, 14, 1, 1, 5),
          conv("3x3 512->512, 7px", n, 512, 512, 7, 3, 1, 2),
          conv("1x1 512->2048, 7px", n, 512, 2048, 7, 1, 1, 3),
          conv("1x1 2048->512, 7px", n, 2048, 512, 7, 1, 1, 2),
          batch_norm("bn 256, 56px", n, 256, 56, 3),
          pool("global avg pool 2048x7px", n, 2048, 7,
               {{"global_pool", "True"}, {"kernel", "(7, 7)"}, {"pool_type", "avg"}}, 1),
          fc("fc 2048->1000", n, 2048, 1000, 1)};
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
          batch_norm("bn 64, 32px", n, 64, 32, 5),
          batch_norm("bn 512, 4px", n, 512, 4, 5),
          pool("global avg pool 512x4px", n, 512, 4,
               {{"global_pool", "True"}, {"kernel", "(4, 4)"}, {"pool_type", "avg"}}, 1),
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

// Forward in training mode (BatchNorm's batch statistics), then backward.
Rates run_layer(const Layer& l, int iters) {
  op::OpInstance inst(l.op, l.attrs, l.name);
  std::vector<NDArray> inputs, aux;
  for (size_t i = 0; i < l.inputs.size(); ++i)
    inputs.push_back(filled(l.inputs[i], static_cast<uint32_t>(i + 1)));
  for (const auto& s : l.aux) aux.push_back(NDArray::full(s, 1.0));
  std::vector<NDArray> outputs = op::invoke(inst, inputs, aux, true);
  std::vector<NDArray> grads;
  for (const auto& s : l.inputs) grads.emplace_back(s);
  NDArray dy = filled(outputs[0].shape(), 9);
  std::vector<op::OpReq> write(outputs.size(), op::OpReq::kWrite);
  std::vector<op::OpReq> gwrite(grads.size(), op::OpReq::kWrite);
  Engine::get().wait_all();
  Rates r;
  r.fwd = best_time(iters, [&] {
    op::invoke_forward(inst, inputs, aux, outputs, write, true);
    Engine::get().wait_all();
  });
  r.bwd = best_time(iters, [&] {
    op::invoke_backward(inst, {dy}, inputs, outputs, aux, grads, gwrite);
    Engine::get().wait_all();
  });
  return r;
}

// The element-wise and normalisation operators of a small transformer's
// step, on 2048 x 512 float32 values of random signs: nanoseconds per
// element (wall clock over the thread budget), forward and backward.
void elementwise_rates(int iters) {
  const Shape x{2048, 512};
  auto layer = [&](const char* name, const char* op, op::AttrMap attrs, std::vector<Shape> inputs) {
    Layer l;
    l.name = name;
    l.op = op;
    l.attrs = std::move(attrs);
    l.inputs = std::move(inputs);
    l.flops = 0;
    l.count = 1;
    return l;
  };
  const std::vector<Layer> layers = {
      layer("relu", "relu", {}, {x}),
      layer("sigmoid", "sigmoid", {}, {x}),
      layer("_mul_scalar", "_mul_scalar", {{"scalar", "3"}}, {x}),
      layer("elemwise_add", "elemwise_add", {}, {x, x}),
      layer("LeakyReLU leaky", "LeakyReLU", {{"act_type", "leaky"}}, {x}),
      layer("LeakyReLU elu", "LeakyReLU", {{"act_type", "elu"}}, {x}),
      layer("LeakyReLU gelu", "LeakyReLU", {{"act_type", "gelu"}}, {x}),
      layer("Activation relu", "Activation", {{"act_type", "relu"}}, {x}),
      layer("LayerNorm (rows of 512)", "LayerNorm", {}, {x, Shape{512}, Shape{512}}),
      layer("softmax (rows of 512)", "softmax", {}, {x}),
      layer("Dropout p=0.1", "Dropout", {{"p", "0.1"}}, {x}),
  };
  std::printf("\n### Element-wise operators on 2048x512 float32: ns per element\n\n");
  std::printf("| operator | forward | backward |\n| --- | ---: | ---: |\n");
  const auto elements = static_cast<double>(x.size());
  for (const Layer& l : layers) {
    const Rates r = run_layer(l, iters);
    std::printf("| %s | %.3f | %.3f |\n", l.name.c_str(), r.fwd.wall * 1e9 / elements,
                r.bwd.wall * 1e9 / elements);
  }
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

// mx's gemm() through OpenBLAS (the reference, MX_DNNL=0) and through
// oneDNN's sgemm, on the products of the char-GPT's training step: the
// layers' (batch x steps = 2048 rows) and one head's attention (64 x 64 x
// 32, 128 of them one after another with gemm_serial, as each thread of the
// attention operators runs its heads).
void compare_gemm(int iters) {
  struct Product {
    const char* name;
    bool ta, tb;
    int64_t m, n, k, repeat;
  };
  const Product products[] = {
      {"qkv projection, forward", false, true, 2048, 384, 128, 1},
      {"feed-forward 1, forward", false, true, 2048, 512, 128, 1},
      {"feed-forward 2, forward", false, true, 2048, 128, 512, 1},
      {"feed-forward 1, data gradient", false, false, 2048, 128, 512, 1},
      {"feed-forward 1, weight gradient", true, false, 512, 128, 2048, 1},
      {"attention scores (per head, x128)", false, true, 64, 64, 32, 128},
      {"attention context (per head, x128)", false, false, 64, 32, 64, 128},
      {"attention key gradient (per head, x128)", true, false, 64, 32, 64, 128},
  };
  std::printf("\n### mx::op::gemm on a small transformer's products: OpenBLAS vs oneDNN\n\n");
  std::printf("| product | m x n x k | OpenBLAS ms | oneDNN ms | speed-up | oneDNN GFLOP/s |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: |\n");
  for (const Product& p : products) {
    const auto size = static_cast<size_t>(std::max({p.m, p.n, p.k}) * std::max({p.m, p.n, p.k}));
    std::vector<float> a(size * static_cast<size_t>(p.repeat), 0.5f), b(a), c(a);
    double ms[2] = {0, 0};
    for (int impl = 0; impl < 2; ++impl) {
      const op::ScopedDnnl dnnl(impl == 1);
      const int64_t lda = p.ta ? p.m : p.k, ldb = p.tb ? p.k : p.n;
      const Timing t = best_time(iters, [&] {
        if (p.repeat == 1) {
          op::gemm(p.ta, p.tb, p.m, p.n, p.k, 1.0f, a.data(), lda, b.data(), ldb, 0.0f, c.data(),
                   p.n);
          return;
        }
        // One thread, as each thread of the attention operators runs its heads.
        for (int64_t r = 0; r < p.repeat; ++r) {
          const size_t offset = size * static_cast<size_t>(r);
          op::gemm_serial(p.ta, p.tb, p.m, p.n, p.k, 1.0f, a.data() + offset, lda,
                          b.data() + offset, ldb, 0.0f, c.data() + offset, p.n);
        }
      });
      ms[impl] = t.wall * 1e3;
    }
    const double flops = 2.0 * static_cast<double>(p.m * p.n * p.k * p.repeat);
    std::printf("| %s | %lldx%lldx%lld | %.3f | %.3f | %.2fx | %.0f |\n", p.name,
                static_cast<long long>(p.m), static_cast<long long>(p.n),
                static_cast<long long>(p.k), ms[0], ms[1], ms[0] / ms[1], flops / ms[1] / 1e6);
  }
}

// Both implementations side by side: milliseconds and the speed-up of oneDNN.
void compare(const char* title, const std::vector<Layer>& layers, int iters) {
  std::printf("\n### %s: reference (OpenBLAS/im2col) vs oneDNN\n\n", title);
  std::printf(
      "| layer | input | fwd ms ref | fwd ms dnnl | fwd speed-up | bwd ms ref | bwd ms dnnl | "
      "bwd speed-up |\n");
  std::printf("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
  Timing total[2][2] = {{{0, 0}, {0, 0}}, {{0, 0}, {0, 0}}};  // [impl][fwd/bwd]
  auto row = [](const std::string& name, const std::string& input, const Timing(&t)[2][2]) {
    std::printf("| %s | %s | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx |\n", name.c_str(),
                input.c_str(), t[0][0].wall * 1e3, t[1][0].wall * 1e3, t[0][0].wall / t[1][0].wall,
                t[0][1].wall * 1e3, t[1][1].wall * 1e3, t[0][1].wall / t[1][1].wall);
    std::fflush(stdout);
  };
  for (const auto& l : layers) {
    Timing t[2][2];
    for (int impl = 0; impl < 2; ++impl) {
      op::ScopedDnnl use(impl == 1);
      const Rates r = run_layer(l, iters);
      t[impl][0] = r.fwd;
      t[impl][1] = r.bwd;
      for (int pass = 0; pass < 2; ++pass) total[impl][pass].wall += l.count * t[impl][pass].wall;
    }
    const std::string name = l.count > 1 ? l.name + " (x" + std::to_string(l.count) + ")" : l.name;
    row(name, l.inputs[0].to_string(), t);
  }
  if (layers.size() > 1) row("**all layers**", "", total);
}

void report(const char* title, std::vector<Layer> layers, int iters, double peak,
            const std::string& only, const std::string& impl) {
  std::erase_if(layers, [&](const Layer& l) { return l.name.find(only) == std::string::npos; });
  if (impl == "both") {
    compare(title, layers, iters);
    return;
  }
  op::ScopedDnnl use(impl == "dnnl");
  std::printf("\n### %s, %s kernels\n\n", title, impl.c_str());
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
    } else if (!std::strcmp(argv[i], "--lenet-batch")) {
      o.lenet_batch = std::max(1, std::atoi(value("--lenet-batch").c_str()));
    } else if (!std::strcmp(argv[i], "--resnet50-batch")) {
      o.resnet50_batch = std::max(1, std::atoi(value("--resnet50-batch").c_str()));
    } else if (!std::strcmp(argv[i], "--impl")) {
      o.impl = value("--impl");
    } else if (!std::strcmp(argv[i], "--vgg-batch")) {
      o.vgg_batch = std::max(1, std::atoi(value("--vgg-batch").c_str()));
    } else if (!std::strcmp(argv[i], "--only")) {
      o.only = value("--only");
    } else {
      std::fprintf(
          stderr,
          "usage: bench_ops [--net lenet|resnet|resnet50|vgg|gemm|elemwise|all] [--iters N] "
          "[--lenet-batch B] [--resnet-batch B] [--resnet50-batch B] [--vgg-batch B] "
          "[--only TEXT] [--impl reference|dnnl|both]\n");
      std::exit(2);
    }
  }
  if (o.net != "lenet" && o.net != "resnet" && o.net != "resnet50" && o.net != "vgg" &&
      o.net != "gemm" && o.net != "elemwise" && o.net != "all") {
    std::fprintf(stderr,
                 "bench_ops: --net must be lenet, resnet, resnet50, vgg, gemm, elemwise or all\n");
    std::exit(2);
  }
  if (o.impl != "reference" && o.impl != "dnnl" && o.impl != "both") {
    std::fprintf(stderr, "bench_ops: --impl must be reference, dnnl or both\n");
    std::exit(2);
  }
  if (o.impl != "reference" && !op::dnnl_built()) {
    std::fprintf(stderr, "bench_ops: --impl %s needs mx built with oneDNN (MX_USE_DNNL)\n",
                 o.impl.c_str());
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
  auto wanted = [&](const char* net) { return o.net == net || o.net == "all"; };
  if (wanted("lenet")) {
    const std::string title = "LeNet (28x28), batch " + std::to_string(o.lenet_batch) + ", float32";
    report(title.c_str(), lenet(o.lenet_batch), o.iters, peak, o.only, o.impl);
  }
  if (wanted("resnet")) {
    const std::string title =
        "ResNet-18 (CIFAR, 32x32), batch " + std::to_string(o.resnet_batch) + ", float32";
    report(title.c_str(), resnet18(o.resnet_batch), o.iters, peak, o.only, o.impl);
  }
  if (wanted("resnet50")) {
    const std::string title =
        "ResNet-50 (224x224), batch " + std::to_string(o.resnet50_batch) + ", float32";
    report(title.c_str(), resnet50(o.resnet50_batch), std::max(1, o.iters - 1), peak, o.only,
           o.impl);
  }
  if (wanted("gemm") && op::dnnl_built()) compare_gemm(std::max(5, o.iters));
  if (wanted("elemwise")) elementwise_rates(std::max(10, o.iters));
  if (wanted("vgg")) {
    const std::string title =
        "VGG-16 (224x224), batch " + std::to_string(o.vgg_batch) + ", float32";
    report(title.c_str(), vgg16(o.vgg_batch), std::max(1, o.iters - 1), peak, o.only, o.impl);
  }
  return 0;
}
