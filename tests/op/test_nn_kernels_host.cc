// The GPU kernels of BatchNorm, Activation, LeakyReLU, softmax/log_softmax,
// SoftmaxOutput, the regression outputs and Dropout, run on the CPU: the
// same functors (and, for the block reductions, the same per-(block,
// thread) functions) the .cu files launch, over the index spaces the GPU
// kernels use, compared with the CPU operators through op::invoke. Also
// Philox4x32-10 against Random123's known-answer vectors.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "base/philox.h"
#include "ndarray/ndarray.h"
#include "op/host_launch.h"
#include "op/invoke.h"
#include "op/nn/activation_kernels.h"
#include "op/nn/batch_norm_kernels.h"
#include "op/nn/dropout_kernels.h"
#include "op/nn/leaky_relu_kernels.h"
#include "op/nn/output_kernels.h"
#include "op/nn/softmax_kernels.h"

using namespace mx;
using op::OpInstance;
using op::OpReq;

namespace {

// Threads per block of the GPU kernels (cuda::kBlockThreads), and an odd
// count that leaves threads with unequal shares.
constexpr int64_t kGpuThreads = 256;
constexpr int64_t kOddThreads = 7;

template <typename T>
std::vector<T> random_values(int64_t n, uint64_t seed, double low = -2, double high = 2) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(low, high);
  std::vector<T> v(static_cast<size_t>(n));
  for (auto& x : v) x = static_cast<T>(u(rng));
  return v;
}

template <typename T>
NDArray array(const Shape& s, const std::vector<T>& v) {
  return NDArray::from_vector<T>(s, v);
}

// Elements of `got` farther than atol + rtol |want| from `want` (NaN counts).
template <typename T>
int64_t mismatches(const std::vector<T>& got, const std::vector<T>& want, double rtol,
                   double atol) {
  REQUIRE(got.size() == want.size());
  int64_t bad = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = got[i], w = want[i];
    if (!(std::abs(g - w) <= atol + rtol * std::abs(w))) ++bad;
  }
  return bad;
}

template <typename T>
void check_close(const std::vector<T>& got, const NDArray& want, const std::string& what,
                 double rtol = 0, double atol = 0) {
  if (rtol == 0 && atol == 0) {
    rtol = std::is_same_v<T, float> ? 2e-5 : 1e-12;
    atol = std::is_same_v<T, float> ? 1e-6 : 1e-14;
  }
  INFO(what);
  CHECK(mismatches(got, want.to_vector<T>(), rtol, atol) == 0);
}

template <typename T>
constexpr DType dtype_v = dtype_of<T>;

}  // namespace

TEST_CASE("Philox4x32-10 gives Random123's known answers") {
  using philox::philox4x32_10;
  auto words = [](philox::Words w) { return std::vector<uint32_t>(w.v, w.v + 4); };
  CHECK(words(philox4x32_10({{0, 0, 0, 0}}, 0, 0)) ==
        std::vector<uint32_t>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  CHECK(words(philox4x32_10({{0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}}, 0xffffffff,
                            0xffffffff)) ==
        std::vector<uint32_t>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(words(philox4x32_10({{0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}}, 0xa4093822,
                            0x299f31d0)) ==
        std::vector<uint32_t>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
  // uniform01: in [0, 1), mean 1/2, a function of (seed, index) only.
  double sum = 0;
  for (uint64_t i = 0; i < 100000; ++i) {
    const double u = philox::uniform01(12345, i);
    REQUIRE(u >= 0.0);
    REQUIRE(u < 1.0);
    sum += u;
  }
  CHECK(sum / 100000 == doctest::Approx(0.5).epsilon(0.01));  // sd of the mean 0.0009
  CHECK(philox::uniform01(7, 1ull << 40) == philox::uniform01(7, 1ull << 40));
  CHECK(philox::uniform01(7, 3) != philox::uniform01(8, 3));
}

TEST_CASE_TEMPLATE("Activation's functors equal the CPU operator", T, float, double) {
  const Shape s{7, 3, 11};
  std::vector<T> x = random_values<T>(s.size(), 1, -6, 6);
  x[0] = T(25);  // softrelu's large-input branch
  x[1] = T(0);
  const std::vector<T> g = random_values<T>(s.size(), 2);
  const std::vector<T> prior = random_values<T>(s.size(), 3);
  for (const char* act : {"relu", "sigmoid", "tanh", "softrelu", "softsign"}) {
    INFO(act);
    const op::ActType t = std::string(act) == "relu"       ? op::ActType::kRelu
                          : std::string(act) == "sigmoid"  ? op::ActType::kSigmoid
                          : std::string(act) == "tanh"     ? op::ActType::kTanh
                          : std::string(act) == "softrelu" ? op::ActType::kSoftRelu
                                                           : op::ActType::kSoftSign;
    OpInstance op("Activation", {{"act_type", act}});
    NDArray xa = array(s, x);
    auto out = op::invoke(op, {xa});
    std::vector<T> y(x.size());
    op::for_each_element_host(s.size(),
                              op::ActivationForward<T>{t, x.data(), y.data(), OpReq::kWrite});
    check_close(y, out[0], "forward");
    // In place, as the executor may run it.
    std::vector<T> inplace = x;
    op::for_each_element_host(
        s.size(), op::ActivationForward<T>{t, inplace.data(), inplace.data(), OpReq::kWrite});
    check_close(inplace, out[0], "forward in place");

    // Backward from the CPU's output, adding onto a prior gradient.
    NDArray dx = array(s, prior);
    op::invoke_backward(op, {array(s, g)}, {xa}, out, {}, {dx}, {OpReq::kAdd});
    const std::vector<T> yc = out[0].to_vector<T>();
    std::vector<T> dxg = prior;
    op::for_each_element_host(
        s.size(), op::ActivationBackward<T>{t, g.data(), yc.data(), dxg.data(), OpReq::kAdd});
    check_close(dxg, dx, "backward, add");
  }
}

TEST_CASE_TEMPLATE("LeakyReLU's functors equal the CPU operator", T, float, double) {
  const Shape s{4, 3, 5};
  const std::vector<T> x = random_values<T>(s.size(), 11, -3, 3);
  const std::vector<T> dy = random_values<T>(s.size(), 12);
  for (const char* act : {"leaky", "elu", "selu", "gelu"}) {
    INFO(act);
    const std::string a = act;
    const op::LeakyType t = a == "leaky"  ? op::LeakyType::kLeaky
                            : a == "elu"  ? op::LeakyType::kElu
                            : a == "selu" ? op::LeakyType::kSelu
                                          : op::LeakyType::kGelu;
    OpInstance op("LeakyReLU", {{"act_type", act}, {"slope", "0.3"}});
    NDArray xa = array(s, x);
    auto out = op::invoke(op, {xa});
    std::vector<T> y(x.size()), dx(x.size());
    op::for_each_element_host(s.size(),
                              op::LeakyForward<T>{t, T(0.3f), x.data(), y.data(), OpReq::kWrite});
    check_close(y, out[0], "forward");
    NDArray dxa = NDArray::zeros(s, Context::cpu(), dtype_v<T>);
    op::invoke_backward(op, {array(s, dy)}, {xa}, out, {}, {dxa}, {OpReq::kWrite});
    op::for_each_element_host(
        s.size(), op::LeakyBackward<T>{t, T(0.3f), x.data(), dy.data(), dx.data(), OpReq::kWrite});
    check_close(dx, dxa, "backward");
  }
  // prelu with one slope per channel and with one shared slope.
  for (int64_t slopes : {3, 1}) {
    INFO("prelu slopes ", slopes);
    const Shape gs{slopes};
    const std::vector<T> gamma = random_values<T>(slopes, 13, 0.1, 0.9);
    OpInstance op("LeakyReLU", {{"act_type", "prelu"}});
    NDArray xa = array(s, x), ga = array(gs, gamma);
    auto out = op::invoke(op, {xa, ga});
    const op::PreluChannel ch{slopes == 1 ? 1 : s[1], s[2]};
    std::vector<T> y(x.size()), dx(x.size());
    op::for_each_element_host(
        s.size(), op::PreluForward<T>{ch, x.data(), gamma.data(), y.data(), OpReq::kWrite});
    check_close(y, out[0], "forward");
    NDArray dxa = NDArray::zeros(s, Context::cpu(), dtype_v<T>);
    const std::vector<T> prior = random_values<T>(slopes, 14);
    NDArray dga = array(gs, prior);
    op::invoke_backward(op, {array(s, dy)}, {xa, ga}, out, {}, {dxa, dga},
                        {OpReq::kWrite, OpReq::kAdd});
    op::for_each_element_host(
        s.size(),
        op::PreluBackwardData<T>{ch, x.data(), gamma.data(), dy.data(), dx.data(), OpReq::kWrite});
    check_close(dx, dxa, "backward data");
    std::vector<T> dgamma = prior;
    const op::PreluGammaGrad<T> f{s[0],     s[1],      s[2],          slopes == 1,
                                  x.data(), dy.data(), dgamma.data(), OpReq::kAdd};
    op::for_each_element_host(f.size(), f);
    check_close(dgamma, dga, "backward gamma");
    // The GPU's decomposition: one block per output, threads' shares summed.
    for (int64_t threads : {kGpuThreads, kOddThreads}) {
      std::vector<T> blocks = prior;
      const op::PreluGammaGrad<T> fb{s[0],     s[1],      s[2],          slopes == 1,
                                     x.data(), dy.data(), blocks.data(), OpReq::kAdd};
      for (int64_t k = 0; k < fb.size(); ++k) {
        double sum = 0;
        for (int64_t t = 0; t < threads; ++t) sum += fb.partial(k, t, threads);
        fb.store(k, sum);
      }
      check_close(blocks, dga, "backward gamma, by blocks", 1e-5, 1e-6);
    }
  }
}

namespace {

// BatchNorm's kernels as the GPU runs them: each channel reduced in
// `splits` parts of `threads` threads each (a block sum is the sum of its
// threads' parts), the parts combined in order once per channel, then the
// output element by element.
template <typename T, typename P>
void run_batch_norm_forward(const op::BatchNormForwardChannel<T, P>& f, int64_t splits,
                            int64_t threads) {
  using C = typename op::BatchNormForwardChannel<T, P>::C;
  std::vector<C> scale(f.view.channels), shift(f.view.channels);
  for (int64_t ch = 0; ch < f.view.channels; ++ch) {
    double mean = 0, sq = 0;
    if (f.batch_stats) {
      double s1 = 0, s2 = 0;
      for (int64_t k = 0; k < splits; ++k) {
        for (int64_t t = 0; t < threads; ++t) {
          double a, b;
          f.partial_sums(ch, f.shift_of(ch), k, splits, t, threads, a, b);
          s1 += a;
          s2 += b;
        }
      }
      f.mean_and_sq(f.shift_of(ch), s1, s2, mean, sq);
    }
    const op::BatchNormStats s = f.stats(ch, mean, sq);
    f.finish(ch, s, sq);
    f.scale_shift(ch, s, scale[ch], shift[ch]);
  }
  // By planes, as batch_norm_gpu.cu writes rows of 32 or more elements.
  for (int64_t plane = 0; plane < f.view.outer * f.view.channels; ++plane)
    for (int64_t j = 0; j < f.view.inner; ++j) {
      const int64_t ch = plane % f.view.channels;
      const int64_t i = plane * f.view.inner + j;
      f.apply(i, f.x[i], scale[ch], shift[ch]);
    }
  // Element by element, as it writes shorter rows: the same channels.
  for (int64_t i = 0; i < f.view.count() * f.view.channels; ++i)
    REQUIRE(f.view.channel_of(i) == (i / f.view.inner) % f.view.channels);
}

template <typename T, typename P>
void run_batch_norm_backward(const op::BatchNormBackwardChannel<T, P>& f, int64_t splits,
                             int64_t threads) {
  std::vector<op::BatchNormDataGrad> grads(f.view.channels);
  for (int64_t ch = 0; ch < f.view.channels; ++ch) {
    const op::BatchNormStats s = f.stats(ch);
    double sum_dy = 0, dot = 0;
    for (int64_t k = 0; k < splits; ++k) {
      for (int64_t t = 0; t < threads; ++t) {
        double a, b;
        f.partial(ch, s.mean, k, splits, t, threads, a, b);
        sum_dy += a;
        dot += b;
      }
    }
    f.finish(ch, s, sum_dy, dot);
    grads[ch] = f.data_grad(ch, s, sum_dy, dot);
  }
  const int64_t n = f.view.count() * f.view.channels;
  for (int64_t i = 0; i < n; ++i) f.apply(i, f.x[i], f.dy[i], grads[f.view.channel_of(i)]);
}

struct BatchNormCase {
  Shape shape;
  int axis;
  bool fix_gamma, use_global_stats, is_train;
  double offset = 0;  // added to the data: a mean far from zero against the spread
};

}  // namespace

TEST_CASE_TEMPLATE("BatchNorm's per-(channel, split, thread) kernels equal the CPU operator", T,
                   float, double) {
  const BatchNormCase cases[] = {
      {{4, 3, 5, 2}, 1, false, false, true},
      {{4, 3, 5, 2}, 1, true, false, true},
      {{6, 4}, 1, false, false, true},
      {{2, 3, 4}, -1, false, false, true},
      {{2, 3, 4}, 2, false, true, true},
      {{5, 3, 2, 2}, 1, false, false, false},
      {{1, 2, 1}, 1, false, false, true},           // one element per channel
      {{2, 3, 300}, 1, false, false, true},         // rows longer than a block
      {{7, 2, 260}, 1, false, false, true},         // more rows than splits
      {{3, 2, 40}, 1, false, false, true, 1000.0},  // the shifted sums keep the variance
  };
  uint64_t seed = 100;
  for (const BatchNormCase& bc : cases) {
    for (auto [splits, threads] : {std::pair<int64_t, int64_t>{1, kGpuThreads},
                                   {3, kGpuThreads},
                                   {1, kOddThreads},
                                   {4, kOddThreads}}) {
      INFO("shape ", bc.shape.to_string(), " axis ", bc.axis, " fix_gamma ", bc.fix_gamma,
           " use_global_stats ", bc.use_global_stats, " train ", bc.is_train, " splits ", splits,
           " threads ", threads);
      const Shape& s = bc.shape;
      const int axis = bc.axis < 0 ? bc.axis + s.ndim() : bc.axis;
      const op::BatchNormView view{s.prod(0, axis), s[axis], s.prod(axis + 1, s.ndim())};
      const Shape cs{view.channels};
      std::vector<T> x = random_values<T>(s.size(), ++seed, -2, 3);
      for (T& v : x) v = static_cast<T>(v + bc.offset);
      const std::vector<T> gamma = random_values<T>(view.channels, ++seed, 0.5, 1.5);
      const std::vector<T> beta = random_values<T>(view.channels, ++seed);
      const std::vector<T> mm0 = random_values<T>(view.channels, ++seed);
      const std::vector<T> mv0 = random_values<T>(view.channels, ++seed, 0.5, 2);
      const op::AttrMap attrs{{"eps", "0.002"},
                              {"momentum", "0.8"},
                              {"fix_gamma", bc.fix_gamma ? "True" : "False"},
                              {"use_global_stats", bc.use_global_stats ? "True" : "False"},
                              {"axis", std::to_string(bc.axis)}};
      OpInstance op("BatchNorm", attrs);
      NDArray xa = array(s, x), ga = array(cs, gamma), ba = array(cs, beta);
      NDArray mma = array(cs, mm0), mva = array(cs, mv0);
      auto out = op::invoke(op, {xa, ga, ba}, {mma, mva}, bc.is_train);

      const bool batch_stats = bc.is_train && !bc.use_global_stats;
      std::vector<T> y(x.size()), mean(cs.size()), invstd(cs.size()), mm = mm0, mv = mv0;
      run_batch_norm_forward(
          op::BatchNormForwardChannel<T>{view, x.data(), gamma.data(), beta.data(), mm.data(),
                                         mv.data(), y.data(), mean.data(), invstd.data(),
                                         OpReq::kWrite, OpReq::kWrite, OpReq::kWrite, 0.002,
                                         static_cast<double>(0.8f), bc.fix_gamma, batch_stats},
          splits, threads);
      check_close(y, out[0], "output", 1e-4, 1e-5);
      check_close(mean, out[1], "mean");
      check_close(invstd, out[2], "invstd", 1e-5, 1e-6);
      check_close(mm, mma, "moving_mean");
      check_close(mv, mva, "moving_var", 1e-5, 1e-6);

      // Backward (a training pass) from the CPU's saved statistics; data
      // gradient written, parameter gradients added.
      const std::vector<T> dy = random_values<T>(s.size(), ++seed);
      const std::vector<T> prior = random_values<T>(view.channels, ++seed);
      NDArray dxa = NDArray::zeros(s, Context::cpu(), dtype_v<T>);
      NDArray dga = array(cs, prior), dba = array(cs, prior);
      op::invoke_backward(op, {array(s, dy)}, {xa, ga, ba}, out, {mma, mva}, {dxa, dga, dba},
                          {OpReq::kWrite, OpReq::kAdd, OpReq::kAdd});
      const std::vector<T> saved_mean = out[1].to_vector<T>(), saved_invstd = out[2].to_vector<T>();
      const std::vector<T> mm1 = mma.to_vector<T>(), mv1 = mva.to_vector<T>();
      std::vector<T> dx(x.size()), dgamma = prior, dbeta = prior;
      run_batch_norm_backward(
          op::BatchNormBackwardChannel<T>{
              view, x.data(), gamma.data(), dy.data(), saved_mean.data(), saved_invstd.data(),
              mm1.data(), mv1.data(), dx.data(), dgamma.data(), dbeta.data(), OpReq::kWrite,
              OpReq::kAdd, OpReq::kAdd, 0.002, bc.fix_gamma, !bc.use_global_stats},
          splits, threads);
      check_close(dx, dxa, "data gradient", 1e-4, 1e-5);
      check_close(dgamma, dga, "gamma gradient", 1e-4, 1e-5);
      check_close(dbeta, dba, "beta gradient", 1e-5, 1e-6);
    }
  }
}

// Mixed precision: bfloat16 data with float32 parameters and statistics, as
// the GPU runs float16 and bfloat16 data (the functors widen each value to
// float); against the CPU operator's own bfloat16 kernel.
TEST_CASE("BatchNorm's kernels on bfloat16 data with float32 parameters equal the CPU operator") {
  const Shape s{4, 3, 5, 8};
  const op::BatchNormView view{4, 3, 40};
  const Shape cs{3};
  const std::vector<float> xf = random_values<float>(s.size(), 7, -2, 3);
  const std::vector<bf16_t> x(xf.begin(), xf.end());
  const std::vector<float> gamma = random_values<float>(3, 8, 0.5, 1.5);
  const std::vector<float> beta = random_values<float>(3, 9);
  const std::vector<float> mm0 = random_values<float>(3, 10);
  const std::vector<float> mv0 = random_values<float>(3, 11, 0.5, 2);
  OpInstance op("BatchNorm", {{"eps", "0.002"}, {"momentum", "0.8"}, {"fix_gamma", "False"}});
  NDArray xa = array(s, x), ga = array(cs, gamma), ba = array(cs, beta);
  NDArray mma = array(cs, mm0), mva = array(cs, mv0);
  auto out = op::invoke(op, {xa, ga, ba}, {mma, mva}, true);
  REQUIRE(out[0].dtype() == DType::kBFloat16);
  REQUIRE(out[1].dtype() == DType::kFloat32);
  // Within one bfloat16 step (2^-8 relative) of each other: both round once.
  auto check_bf16 = [](const std::vector<bf16_t>& got, const NDArray& want) {
    const std::vector<bf16_t> w = want.to_vector<bf16_t>();
    REQUIRE(got.size() == w.size());
    int64_t bad = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      const float g = static_cast<float>(got[i]), v = static_cast<float>(w[i]);
      if (!(std::abs(g - v) <= 1e-2f * (1 + std::abs(v)))) ++bad;
    }
    CHECK(bad == 0);
  };
  std::vector<bf16_t> y(x.size());
  std::vector<float> mean(3), invstd(3), mm = mm0, mv = mv0;
  run_batch_norm_forward(
      op::BatchNormForwardChannel<bf16_t, float>{
          view, x.data(), gamma.data(), beta.data(), mm.data(), mv.data(), y.data(), mean.data(),
          invstd.data(), OpReq::kWrite, OpReq::kWrite, OpReq::kWrite, 0.002,
          static_cast<double>(0.8f), false, true},
      3, kOddThreads);
  check_bf16(y, out[0]);
  check_close(mean, out[1], "mean", 1e-5, 1e-6);
  check_close(invstd, out[2], "invstd", 1e-5, 1e-6);
  check_close(mm, mma, "moving_mean", 1e-5, 1e-6);
  check_close(mv, mva, "moving_var", 1e-5, 1e-6);

  const std::vector<float> dyf = random_values<float>(s.size(), 12);
  const std::vector<bf16_t> dy(dyf.begin(), dyf.end());
  NDArray dxa = NDArray::zeros(s, Context::cpu(), DType::kBFloat16);
  NDArray dga = NDArray::zeros(cs), dba = NDArray::zeros(cs);
  op::invoke_backward(op, {array(s, dy)}, {xa, ga, ba}, out, {mma, mva}, {dxa, dga, dba},
                      {OpReq::kWrite, OpReq::kWrite, OpReq::kWrite});
  const std::vector<float> saved_mean = out[1].to_vector<float>();
  const std::vector<float> saved_invstd = out[2].to_vector<float>();
  std::vector<bf16_t> dx(x.size());
  std::vector<float> dgamma(3), dbeta(3);
  run_batch_norm_backward(
      op::BatchNormBackwardChannel<bf16_t, float>{
          view, x.data(), gamma.data(), dy.data(), saved_mean.data(), saved_invstd.data(),
          mm.data(), mv.data(), dx.data(), dgamma.data(), dbeta.data(), OpReq::kWrite,
          OpReq::kWrite, OpReq::kWrite, 0.002, false, true},
      3, kOddThreads);
  check_bf16(dx, dxa);
  check_close(dgamma, dga, "gamma gradient", 1e-4, 1e-5);
  check_close(dbeta, dba, "beta gradient", 1e-4, 1e-5);
}

TEST_CASE("softmax and log_softmax: the per-vector functors equal the CPU operators") {
  const Shape s{3, 4, 5};
  const std::vector<float> x = random_values<float>(s.size(), 21, -4, 4);
  const std::vector<double> g = random_values<double>(s.size(), 22);
  for (bool log : {false, true}) {
    for (int axis : {0, 1, -1}) {
      for (const char* temperature : {"None", "2.5"}) {
        INFO("log ", log, " axis ", axis, " temperature ", temperature);
        // float32 in, float64 out (dtype), as the kernels are templated on both.
        OpInstance op(
            log ? "log_softmax" : "softmax",
            {{"axis", std::to_string(axis)}, {"temperature", temperature}, {"dtype", "float64"}});
        NDArray xa = array(s, x);
        auto out = op::invoke(op, {xa});
        const int ax = axis < 0 ? axis + 3 : axis;
        const op::SoftmaxLayout l{s.prod(0, ax), s[ax], s.prod(ax + 1, 3)};
        const double inv_t = std::string(temperature) == "None" ? 1.0 : 1.0 / 2.5;
        std::vector<double> y(x.size(), 7.0);
        const op::SoftmaxRowForward<float, double> fwd{x.data(), y.data(),    l, inv_t,
                                                       log,      OpReq::kAdd, {}};
        op::for_each_element_host(fwd.rows(), fwd);
        std::vector<double> y_cpu = out[0].to_vector<double>();
        for (double& v : y_cpu) v += 7.0;
        CHECK(mismatches(y, y_cpu, 1e-12, 1e-12) == 0);

        NDArray dxa = NDArray::zeros(s, Context::cpu(), DType::kFloat32);
        op::invoke_backward(op, {array(s, g)}, {xa}, out, {}, {dxa}, {OpReq::kWrite});
        const std::vector<double> yc = out[0].to_vector<double>();
        std::vector<float> dx(x.size());
        const op::SoftmaxRowBackward<float, double> bwd{yc.data(), g.data(), dx.data(),     l,
                                                        inv_t,     log,      OpReq::kWrite, {}};
        op::for_each_element_host(bwd.rows(), bwd);
        check_close(dx, dxa, "backward");
      }
    }
  }
}

TEST_CASE("softmax over the last axis of float32 (the vectorised rows) equals the functors") {
  // Attention's case: (N * heads, T, T) scores; with a temperature too.
  const Shape s{6, 5, 33};
  const std::vector<float> x = random_values<float>(s.size(), 31, -8, 8);
  const std::vector<float> g = random_values<float>(s.size(), 32);
  for (const char* temperature : {"None", "0.7"}) {
    INFO("temperature ", temperature);
    OpInstance op("softmax", {{"axis", "-1"}, {"temperature", temperature}});
    NDArray xa = array(s, x);
    auto out = op::invoke(op, {xa});
    const op::SoftmaxLayout l{30, 33, 1};
    const double inv_t = std::string(temperature) == "None" ? 1.0 : 1.0 / 0.7;
    std::vector<float> y(x.size());
    const op::SoftmaxRowForward<float, float> fwd{x.data(), y.data(),      l, inv_t,
                                                  false,    OpReq::kWrite, {}};
    op::for_each_element_host(fwd.rows(), fwd);
    CHECK(mismatches(out[0].to_vector<float>(), y, 1e-5, 1e-7) == 0);

    NDArray dxa = NDArray::zeros(s, Context::cpu(), DType::kFloat32);
    op::invoke_backward(op, {array(s, g)}, {xa}, out, {}, {dxa}, {OpReq::kWrite});
    const std::vector<float> yc = out[0].to_vector<float>();
    std::vector<float> dx(x.size());
    const op::SoftmaxRowBackward<float, float> bwd{yc.data(), g.data(), dx.data(),     l,
                                                   inv_t,     false,    OpReq::kWrite, {}};
    op::for_each_element_host(bwd.rows(), bwd);
    check_close(dx, dxa, "backward");
  }
}

TEST_CASE("softmax by a block per row (long contiguous rows): the threads' parts combined") {
  // softmax_gpu.cu's block-per-row kernels: each thread takes elements t,
  // t + threads, ...; maxima and sums of the threads are combined. With
  // lengths, so that some threads see nothing of a row.
  const op::SoftmaxLayout l{5, 100, 1};
  const std::vector<double> x = random_values<double>(500, 41, -6, 6);
  const std::vector<double> g = random_values<double>(500, 42);
  const std::vector<int64_t> len{100, 1, 0, 37, 64};
  for (const bool log : {false, true}) {
    for (const bool with_length : {false, true}) {
      const op::LengthRef lengths =
          with_length ? op::LengthRef{len.data(), DType::kInt64} : op::LengthRef{};
      std::vector<double> want(x.size()), want_dx(x.size());
      const op::SoftmaxRowForward<double, double> one{x.data(), want.data(),   l,      1.3,
                                                      log,      OpReq::kWrite, lengths};
      op::for_each_element_host(one.rows(), one);
      const op::SoftmaxRowBackward<double, double> one_back{
          want.data(), g.data(), want_dx.data(), l, 1.3, log, OpReq::kWrite, lengths};
      op::for_each_element_host(one_back.rows(), one_back);
      for (int64_t threads : {32, 7}) {
        INFO("log ", log, " lengths ", with_length, " threads ", threads);
        std::vector<double> y(x.size(), -1.0), dx(x.size(), -1.0);
        const op::SoftmaxRowForward<double, double> f{x.data(), y.data(),      l,      1.3,
                                                      log,      OpReq::kWrite, lengths};
        const op::SoftmaxRowBackward<double, double> b{
            want.data(), g.data(), dx.data(), l, 1.3, log, OpReq::kWrite, lengths};
        for (int64_t row = 0; row < f.rows(); ++row) {
          double top = -std::numeric_limits<double>::infinity(), sum = 0, dot = 0;
          for (int64_t t = 0; t < threads; ++t)
            top = op::softmax_max(top, f.partial_max(row, t, threads));
          for (int64_t t = 0; t < threads; ++t) sum += f.partial_sum(row, top, t, threads);
          for (int64_t t = 0; t < threads; ++t) f.write(row, top, sum, t, threads);
          for (int64_t t = 0; t < threads; ++t) dot += b.partial_dot(row, t, threads);
          for (int64_t t = 0; t < threads; ++t) b.write(row, dot, t, threads);
        }
        CHECK(mismatches(y, want, 1e-12, 1e-14) == 0);
        CHECK(mismatches(dx, want_dx, 1e-12, 1e-14) == 0);
      }
    }
  }
}

TEST_CASE_TEMPLATE("softmax with lengths of an integer type: the functor reads them", L, int32_t,
                   uint8_t, int64_t) {
  const Shape s{3, 6, 2};
  const std::vector<double> x = random_values<double>(s.size(), 31);
  const std::vector<L> len{0, 1, 3, 6, 2, 5};  // per (outer, inner) vector
  OpInstance op("softmax", {{"axis", "1"}, {"use_length", "True"}});
  NDArray xa = array(s, x), la = NDArray::from_vector<L>(Shape{3, 2}, len);
  auto out = op::invoke(op, {xa, la});
  const op::SoftmaxLayout l{3, 6, 2};
  const op::LengthRef lengths{len.data(), dtype_of<L>};
  std::vector<double> y(x.size());
  const op::SoftmaxRowForward<double, double> fwd{x.data(), y.data(),      l,      1.0,
                                                  false,    OpReq::kWrite, lengths};
  op::for_each_element_host(fwd.rows(), fwd);
  check_close(y, out[0], "forward");
  const std::vector<double> g = random_values<double>(s.size(), 32);
  NDArray dxa = NDArray::zeros(s, Context::cpu(), DType::kFloat64);
  NDArray dla = NDArray::zeros(Shape{3, 2}, Context::cpu(), dtype_of<L>);
  op::invoke_backward(op, {array(s, g)}, {xa, la}, out, {}, {dxa, dla},
                      {OpReq::kWrite, OpReq::kWrite});
  const std::vector<double> yc = out[0].to_vector<double>();
  std::vector<double> dx(x.size());
  const op::SoftmaxRowBackward<double, double> bwd{yc.data(), g.data(), dx.data(),     l,
                                                   1.0,       false,    OpReq::kWrite, lengths};
  op::for_each_element_host(bwd.rows(), bwd);
  check_close(dx, dxa, "backward");
}

namespace {

// SoftmaxOutput's class-label gradient as the GPU computes it; the valid
// count (normalization 'valid') summed over a block's threads.
template <typename T>
std::vector<T> softmax_output_grad(const std::vector<T>& y, const std::vector<T>& label,
                                   const op::SoftmaxLayout& l, double grad_scale,
                                   const std::string& normalization, bool multi_output,
                                   bool use_ignore, int ignore, double alpha, const T* og) {
  int64_t valid = 0;
  const op::ValidLabelCount<T> count{label.data(), static_cast<int64_t>(label.size()), ignore};
  for (int64_t t = 0; t < kGpuThreads; ++t) valid += count.partial(t, kGpuThreads);
  double scale = grad_scale;
  if (normalization == "batch")
    scale /= multi_output ? static_cast<double>(l.outer) : static_cast<double>(label.size());
  if (multi_output && normalization != "valid") scale /= static_cast<double>(l.inner);
  std::vector<T> dx(y.size());
  op::for_each_element_host(
      static_cast<int64_t>(y.size()),
      op::SoftmaxOutputGrad<T>{y.data(), label.data(), og, dx.data(), l, ignore, use_ignore, alpha,
                               l.size > 1 ? alpha / static_cast<double>(l.size - 1) : 0.0, scale,
                               normalization == "valid" ? &valid : nullptr, OpReq::kWrite});
  return dx;
}

}  // namespace

TEST_CASE("SoftmaxOutput: the forward and gradient functors equal the CPU operator") {
  using T = float;
  struct Case {
    Shape data, label;
    bool multi_output, preserve_shape, use_ignore, out_grad;
    const char* normalization;
    float smooth_alpha, grad_scale;
  };
  const Case cases[] = {
      {{6, 5}, {6}, false, false, false, false, "null", 0.0f, 1.0f},
      {{6, 5}, {6}, false, false, true, false, "valid", 0.0f, 2.0f},
      {{6, 5}, {6}, false, false, true, true, "batch", 0.1f, 1.0f},
      {{2, 3, 4}, {2, 3}, false, true, true, false, "valid", 0.2f, 0.5f},
      {{2, 4, 3, 2}, {2, 6}, true, false, true, false, "null", 0.0f, 1.0f},
      {{2, 4, 3, 2}, {2, 3, 2}, true, false, false, false, "batch", 0.0f, 1.0f},
      {{2, 4, 3, 2}, {2, 6}, true, false, true, true, "valid", 0.3f, 1.5f},
  };
  uint64_t seed = 40;
  for (const Case& c : cases) {
    INFO("data ", c.data.to_string(), " multi_output ", c.multi_output, " normalization ",
         std::string(c.normalization));
    const Shape& s = c.data;
    const op::SoftmaxLayout l = c.multi_output ? op::SoftmaxLayout{s[0], s[1], s.prod(2, s.ndim())}
                                : c.preserve_shape
                                    ? op::SoftmaxLayout{s.prod(0, s.ndim() - 1), s[s.ndim() - 1], 1}
                                    : op::SoftmaxLayout{s[0], s.prod(1, s.ndim()), 1};
    const std::vector<T> x = random_values<T>(s.size(), ++seed, -3, 3);
    std::vector<T> label(static_cast<size_t>(c.label.size()));
    std::mt19937_64 rng(++seed);
    for (auto& v : label) v = static_cast<T>(static_cast<int>(rng() % (l.size + 1)) - 1);
    const std::vector<T> og = random_values<T>(s.size(), ++seed);
    OpInstance op("SoftmaxOutput", {{"multi_output", c.multi_output ? "True" : "False"},
                                    {"preserve_shape", c.preserve_shape ? "True" : "False"},
                                    {"use_ignore", c.use_ignore ? "True" : "False"},
                                    {"out_grad", c.out_grad ? "True" : "False"},
                                    {"normalization", c.normalization},
                                    {"ignore_label", "-1"},
                                    {"smooth_alpha", std::to_string(c.smooth_alpha)},
                                    {"grad_scale", std::to_string(c.grad_scale)}});
    NDArray xa = array(s, x), la = array(c.label, label);
    auto out = op::invoke(op, {xa, la});
    std::vector<T> y(x.size());
    const op::SoftmaxRowForward<T, T> fwd{x.data(), y.data(), l, 1.0, false, OpReq::kWrite, {}};
    op::for_each_element_host(fwd.rows(), fwd);
    check_close(y, out[0], "forward");

    NDArray dxa = NDArray::zeros(s, Context::cpu(), DType::kFloat32);
    NDArray dla = NDArray::full(c.label, 9.0, Context::cpu(), DType::kFloat32);
    op::invoke_backward(op, {array(s, og)}, {xa, la}, out, {}, {dxa, dla},
                        {OpReq::kWrite, OpReq::kWrite});
    const std::vector<T> yc = out[0].to_vector<T>();
    const std::vector<T> dx = softmax_output_grad<T>(
        yc, label, l, static_cast<double>(std::stof(std::to_string(c.grad_scale))), c.normalization,
        c.multi_output, c.use_ignore, -1,
        static_cast<double>(std::stof(std::to_string(c.smooth_alpha))),
        c.out_grad ? og.data() : nullptr);
    check_close(dx, dxa, "gradient");
    for (float v : dla.to_vector<float>()) REQUIRE(v == 0.0f);
  }
  // Labels shaped like the data hold probabilities.
  const Shape s{4, 3};
  const std::vector<T> x = random_values<T>(12, 50), p = random_values<T>(12, 51, 0, 1);
  OpInstance op("SoftmaxOutput", {{"grad_scale", "0.5"}});
  auto out = op::invoke(op, {array(s, x), array(s, p)});
  NDArray dxa = NDArray::zeros(s, Context::cpu(), DType::kFloat32);
  op::invoke_backward(op, {}, {array(s, x), array(s, p)}, out, {}, {dxa, NDArray()},
                      {OpReq::kWrite, OpReq::kNull});
  const std::vector<T> yc = out[0].to_vector<T>();
  std::vector<T> dx(12);
  op::for_each_element_host(12, op::SoftmaxOutputProbGrad<T>{yc.data(), p.data(), nullptr,
                                                             dx.data(), 0.5f, OpReq::kWrite});
  check_close(dx, dxa, "probability labels");
}

TEST_CASE_TEMPLATE("regression outputs: the functors equal the CPU operators", T, float, double) {
  for (const char* name :
       {"LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"}) {
    for (const Shape& ls : {Shape{5}, Shape{5, 3}}) {
      INFO(name, " labels ", ls.to_string());
      const std::string n = name;
      const op::Regression kind = n == "LinearRegressionOutput"     ? op::Regression::kLinear
                                  : n == "LogisticRegressionOutput" ? op::Regression::kLogistic
                                                                    : op::Regression::kMAE;
      const Shape s = ls.ndim() == 1 ? Shape{5, 1} : ls;
      const std::vector<T> x = random_values<T>(s.size(), 60, -3, 3);
      const std::vector<T> label = random_values<T>(s.size(), 61);
      OpInstance op(name, {{"grad_scale", "0.75"}});
      NDArray xa = array(s, x), la = array(ls, label);
      auto out = op::invoke(op, {xa, la});
      std::vector<T> y(x.size());
      op::for_each_element_host(s.size(),
                                op::RegressionForward<T>{kind, x.data(), y.data(), OpReq::kWrite});
      check_close(y, out[0], "forward");
      const std::vector<T> prior = random_values<T>(s.size(), 62);
      NDArray dxa = array(s, prior);
      op::invoke_backward(op, {}, {xa, la}, out, {}, {dxa, NDArray()}, {OpReq::kAdd, OpReq::kNull});
      const std::vector<T> yc = out[0].to_vector<T>();
      std::vector<T> dx = prior;
      const T scale = static_cast<T>(0.75f / static_cast<double>(ls.size() / ls[0]));
      op::for_each_element_host(
          s.size(),
          op::RegressionBackward<T>{kind, scale, yc.data(), label.data(), dx.data(), OpReq::kAdd});
      check_close(dx, dxa, "backward, add");
    }
  }
}

TEST_CASE(
    "Dropout: the GPU mask keeps 1 - p scaled by 1 / (1 - p); the application equals the "
    "CPU's") {
  // The drawn mask: each element is 0 or the scale; the fraction kept is 1 - p.
  const int64_t n = 200000;
  std::vector<float> mask(static_cast<size_t>(n));
  const double keep = 1.0 - 0.3;
  const float scale = static_cast<float>(1.0 / keep);
  op::for_each_element_host(n, op::DropoutMaskDraw<float>{mask.data(), 99, keep, scale});
  int64_t kept = 0;
  for (float m : mask) {
    REQUIRE((m == 0.0f || m == scale));
    kept += m != 0.0f;
  }
  CHECK(static_cast<double>(kept) / n == doctest::Approx(0.7).epsilon(0.01));  // sd 0.001
  std::vector<float> again(mask.size()), other(mask.size());
  op::for_each_element_host(n, op::DropoutMaskDraw<float>{again.data(), 99, keep, scale});
  op::for_each_element_host(n, op::DropoutMaskDraw<float>{other.data(), 100, keep, scale});
  CHECK(again == mask);
  CHECK(other != mask);
  // p = 1 (keep 0, scale 0) drops everything.
  op::for_each_element_host(n, op::DropoutMaskDraw<float>{other.data(), 5, 0.0, 0.0f});
  for (float m : other) REQUIRE(m == 0.0f);

  // Applying the CPU operator's mask, broadcast along shared axes, gives its
  // output; the backward pass the same with dy.
  for (const char* axes : {"()", "(1,)", "(0, 2)"}) {
    INFO("axes ", axes);
    const Shape s{5, 4, 6};
    const std::vector<double> x = random_values<double>(s.size(), 70, 0.5, 1.5);
    OpInstance op("Dropout", {{"p", "0.4"}, {"axes", axes}});
    NDArray xa = array(s, x);
    auto out = op::invoke(op, {xa}, {}, true);
    const std::vector<double> m = out[1].to_vector<double>();
    const op::DropoutMaskIndex idx = op::dropout_mask_index(s, out[1].shape());
    std::vector<double> y(x.size());
    op::for_each_element_host(
        s.size(), op::DropoutApply<double>{x.data(), m.data(), y.data(), idx, OpReq::kWrite});
    check_close(y, out[0], "forward", 0, 0);
    const std::vector<double> dy = random_values<double>(s.size(), 71);
    const std::vector<double> prior = random_values<double>(s.size(), 72);
    NDArray dxa = array(s, prior);
    op::invoke_backward(op, {array(s, dy)}, {xa}, out, {}, {dxa}, {OpReq::kAdd});
    std::vector<double> dx = prior;
    op::for_each_element_host(
        s.size(), op::DropoutApply<double>{dy.data(), m.data(), dx.data(), idx, OpReq::kAdd});
    check_close(dx, dxa, "backward, add");
  }
}
