// The scalar kernels (std::) and the choice of instruction set.
#include "op/vmath/vmath.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "base/bfloat16.h"
#include "base/error.h"
#include "base/logging.h"
#include "base/runtime_config.h"
#include "op/vmath/dropout_bits.h"

namespace mx::op::vmath {

#ifdef MX_VMATH_X86
namespace avx2 {
const Kernels& kernels();
}
namespace avx512 {
const Kernels& kernels();
}
#endif

namespace {

template <float (*F)(float)>
void map(const float* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = F(in[i]);
}

float exp_1(float x) { return std::exp(x); }
float expm1_1(float x) { return std::expm1(x); }
float log_1(float x) { return std::log(x); }
float tanh_1(float x) { return std::tanh(x); }
float sigmoid_1(float x) { return 1.0f / (1.0f + std::exp(-x)); }
float softrelu_1(float x) { return x > 20.0f ? x : std::log1p(std::exp(x)); }
float erf_1(float x) { return std::erf(x); }

void widen_bf16_1(const uint16_t* in, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_t::to_float(in[i]);
}
void round_bf16_1(const float* in, uint16_t* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = bf16_t::from_float(in[i]);
}

void dropout_1(const float* x, float* y, float* mask, int64_t n, uint64_t first, uint64_t seed,
               uint32_t threshold, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    mask[i] = dropout_keeps(first + static_cast<uint64_t>(i), seed, threshold) ? scale : 0.0f;
    if (x != nullptr) y[i] = x[i] * mask[i];
  }
}

void softmax_row_1(const float* x, float* y, int64_t n, float inv_t) {
  const float top = *std::max_element(x, x + n);
  for (int64_t k = 0; k < n; ++k) y[k] = std::exp((x[k] - top) * inv_t);
  double sum = 0.0;
  for (int64_t k = 0; k < n; ++k) sum += y[k];
  const auto inv = static_cast<float>(1.0 / sum);
  for (int64_t k = 0; k < n; ++k) y[k] *= inv;
}

void softmax_row_backward_1(const float* y, const float* g, float* dx, int64_t n, float inv_t) {
  double dot = 0.0;
  for (int64_t k = 0; k < n; ++k) dot += static_cast<double>(g[k]) * static_cast<double>(y[k]);
  const auto s = static_cast<float>(dot);
  for (int64_t k = 0; k < n; ++k) dx[k] = y[k] * (g[k] - s) * inv_t;
}

float gelu_1(float x) { return 0.5f * x * (1.0f + std::erf(x * kInvSqrt2)); }

void gelu_backward_1(const float* x, const float* dy, float* dx, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i];
    const float cdf = 0.5f * (1.0f + std::erf(v * kInvSqrt2));
    const float pdf = std::exp(-0.5f * v * v) * kInvSqrt2Pi;
    dx[i] = dy[i] * (cdf + v * pdf);
  }
}

void row_sums_1(const float* x, int64_t n, double shift, double* sum, double* sq) {
  double a = 0.0, b = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - shift;
    a += d;
    b += d * d;
  }
  *sum = a;
  *sq = b;
}

void normalize_row_1(const float* x, const float* gamma, const float* beta, float* y, int64_t n,
                     float mean, float rstd) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - mean) * rstd * gamma[i] + beta[i];
}

void norm_grad_sums_1(const float* x, const float* dy, const float* gamma, int64_t n, double mean,
                      double* sum_g, double* sum_gx) {
  double a = 0.0, b = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const double g = static_cast<double>(dy[i]) * static_cast<double>(gamma[i]);
    a += g;
    b += g * (static_cast<double>(x[i]) - mean);
  }
  *sum_g = a;
  *sum_gx = b;
}

void norm_grad_row_1(const float* x, const float* dy, const float* gamma, float* dx, int64_t n,
                     float mean, float mean_g, float k, float rstd) {
  for (int64_t i = 0; i < n; ++i) dx[i] = (dy[i] * gamma[i] - mean_g - (x[i] - mean) * k) * rstd;
}

void norm_param_grad_row_1(const float* x, const float* dy, int64_t n, double mean, double rstd,
                           double* dgamma, double* dbeta) {
  for (int64_t i = 0; i < n; ++i) {
    const double d = dy[i];
    dgamma[i] += d * (static_cast<double>(x[i]) - mean) * rstd;
    dbeta[i] += d;
  }
}

constexpr Kernels kScalar{
    map<exp_1>,       map<expm1_1>,           map<log_1>,           map<tanh_1>,
    map<sigmoid_1>,   map<softrelu_1>,        map<erf_1>,           map<gelu_1>,
    gelu_backward_1,  widen_bf16_1,           round_bf16_1,         dropout_1,
    softmax_row_1,    softmax_row_backward_1, row_sums_1,           normalize_row_1,
    norm_grad_sums_1, norm_grad_row_1,        norm_param_grad_row_1};

Isa choose() {
  Isa best = supported(Isa::kAvx512) ? Isa::kAvx512
             : supported(Isa::kAvx2) ? Isa::kAvx2
                                     : Isa::kScalar;
  const std::string& want = runtime_config().vmath_isa;  // empty, or a valid name
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (want != isa_name(isa)) continue;
    if (supported(isa)) return isa;
    MX_LOG(kWarning) << "MX_VMATH_ISA=" << want << ": this CPU does not run it; using "
                     << isa_name(best);
    return best;
  }
  return best;
}

}  // namespace

bool supported(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return true;
#ifdef MX_VMATH_X86
    // libgcc's check includes the OS's support for the wider registers (XCR0).
    case Isa::kAvx2: return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case Isa::kAvx512: return __builtin_cpu_supports("avx512f");
#else
    case Isa::kAvx2:
    case Isa::kAvx512: return false;
#endif
  }
  return false;
}

const Kernels& kernels(Isa isa) {
  if (!supported(isa)) throw Error(std::string("vmath: this CPU or build has no ") + isa_name(isa));
#ifdef MX_VMATH_X86
  if (isa == Isa::kAvx2) return avx2::kernels();
  if (isa == Isa::kAvx512) return avx512::kernels();
#endif
  return kScalar;
}

Isa active_isa() {
  static const Isa isa = choose();
  return isa;
}

const char* isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar: return "scalar";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
  }
  return "?";
}

}  // namespace mx::op::vmath
