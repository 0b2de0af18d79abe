// The SIMD kernels, written once with GCC/Clang vector extensions and
// compiled per instruction set: the including file defines MX_VMATH_BYTES
// (the register width) and MX_VMATH_NS (the namespace of its kernels()).
// Everything here is file-local, so no wide-instruction code leaks into
// functions that other translation units share.
//
// The polynomials are Cephes' (expf, logf, tanhf) and fitted ones for erf; each
// function ends by passing NaN through unchanged.
#pragma once

#include <cstdint>

#include "op/vmath/dropout_bits.h"
#include "op/vmath/vmath_kernels.h"

namespace mx::op::vmath::MX_VMATH_NS {
namespace {

constexpr int kLanes = MX_VMATH_BYTES / 4;
typedef float vf __attribute__((vector_size(MX_VMATH_BYTES)));
typedef int32_t vi __attribute__((vector_size(MX_VMATH_BYTES)));

constexpr int32_t kSignBit = INT32_MIN;
constexpr float kInf = __builtin_inff();

inline vf splat(float c) { return vf{} + c; }
inline vi bits(vf x) { return __builtin_bit_cast(vi, x); }
inline vf from_bits(vi x) { return __builtin_bit_cast(vf, x); }
// mask lanes are all ones or all zeros (the result of a comparison).
inline vf select(vi mask, vf a, vf b) { return from_bits((mask & bits(a)) | (~mask & bits(b))); }
inline vf vabs(vf x) { return from_bits(bits(x) & ~kSignBit); }
inline vf vmin(vf a, vf b) { return select(a < b, a, b); }
inline vf vmax(vf a, vf b) { return select(a > b, a, b); }
inline vi is_nan(vf x) { return x != x; }
// Round to nearest (ties to even) for |x| < 2^22.
inline vf round_nearest(vf x) {
  const float magic = 12582912.0f;  // 1.5 * 2^23
  return (x + magic) - magic;
}
// 2^n for integer lanes n in [-126, 127].
inline vf pow2i(vi n) { return from_bits((n + 127) << 23); }

inline vf exp_v(vf x) {
  // Below -103.98 the result rounds to 0. Those lanes are computed on 0
  // and zeroed at the end: scaling them down would make denormals, which
  // cost a microcode assist per instruction on Intel CPUs (a masked softmax
  // has such lanes in every row). Above 89 the result is inf anyway.
  const vi zero = x < -103.98f;
  const vf xc = vmin(select(zero, splat(0.0f), x), splat(89.0f));
  const vf n = round_nearest(xc * 1.44269504088896341f);
  // x - n ln2 in two steps; n * 0.693359375 is exact.
  vf r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  vf p = splat(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  vf y = p * (r * r) + r + 1.0f;
  // Scale by 2^n in two halves so that n in [-150, 128] reaches the
  // denormals and infinity with one rounding.
  const vi ni = __builtin_convertvector(n, vi);
  const vi half = ni >> 1;
  y = y * pow2i(half) * pow2i(ni - half);
  return select(is_nan(x), x, select(zero, splat(0.0f), y));
}

inline vf log_v(vf x) {
  // Denormals: scale into the normal range first.
  const vi tiny = x < 1.17549435e-38f;
  const vf xs = select(tiny, x * 8388608.0f, x);
  const vi b = bits(xs);
  vi e = ((b >> 23) & 0xff) - 126;
  e -= tiny & 23;
  vf m = from_bits((b & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
  const vi low = m < 0.707106781186547524f;
  vf ef = __builtin_convertvector(e, vf) - select(low, splat(1.0f), splat(0.0f));
  m = select(low, m + m, m) - 1.0f;  // log(1 + m) with m in [-0.29, 0.41]
  const vf z = m * m;
  vf p = splat(7.0376836292e-2f);
  p = p * m - 1.1514610310e-1f;
  p = p * m + 1.1676998740e-1f;
  p = p * m - 1.2420140846e-1f;
  p = p * m + 1.4249322787e-1f;
  p = p * m - 1.6668057665e-1f;
  p = p * m + 2.0000714765e-1f;
  p = p * m - 2.4999993993e-1f;
  p = p * m + 3.3333331174e-1f;
  vf y = p * m * z;
  y = y + ef * -2.12194440e-4f;
  y = y - 0.5f * z;
  vf r = m + y;
  r = r + ef * 0.693359375f;
  r = select(x == 0.0f, splat(-kInf), r);
  r = select(x == kInf, splat(kInf), r);
  r = select(x < 0.0f, splat(__builtin_nanf("")), r);
  return select(is_nan(x), x, r);
}

// e^x - 1: a Taylor polynomial near 0, where e^x - 1 would cancel.
inline vf expm1_v(vf x) {
  vf p = splat(1.0f / 3628800.0f);  // 1/10!
  p = p * x + 1.0f / 362880.0f;
  p = p * x + 1.0f / 40320.0f;
  p = p * x + 1.0f / 5040.0f;
  p = p * x + 1.0f / 720.0f;
  p = p * x + 1.0f / 120.0f;
  p = p * x + 1.0f / 24.0f;
  p = p * x + 1.0f / 6.0f;
  p = p * x + 0.5f;
  p = p * x + 1.0f;
  const vf near = p * x;
  const vf far = exp_v(x) - 1.0f;
  return select(vabs(x) < 0.7f, near, select(is_nan(x), x, far));
}

inline vf tanh_v(vf x) {
  const vf ax = vabs(x);
  const vf z = ax * ax;
  vf p = splat(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const vf near = p * z * ax + ax;
  // tanh(10) rounds to 1, so larger arguments need not reach exp.
  const vf e = exp_v(vmin(ax, splat(10.0f)) * 2.0f);
  const vf far = 1.0f - 2.0f / (e + 1.0f);
  const vf r = select(ax < 0.625f, near, far);
  return select(is_nan(x), x, from_bits(bits(r) | (bits(x) & kSignBit)));
}

inline vf sigmoid_v(vf x) { return 1.0f / (1.0f + exp_v(-x)); }

// log(1 + e^x) = max(x, 0) + log1p(e^-|x|); log1p(u) = log(w) - ((w - 1) - u) / w
// for w = 1 + u rounded, which corrects w's rounding error.
inline vf softrelu_v(vf x) {
  const vf u = exp_v(-vabs(x));
  const vf w = u + 1.0f;
  const vf log1p_u = log_v(w) - ((w - 1.0f) - u) / w;
  return select(is_nan(x), x, vmax(x, splat(0.0f)) + log1p_u);
}

// Minimax fits (weighted least squares in double, scripts/fit_erf.py).
inline vf erf_v(vf x) {
  const vf t = vabs(x);
  // |x| < 1: x + x * p(x^2).
  const vf s = x * x;
  vf p = splat(7.889426342e-05f);
  p = p * s + -8.020941168e-04f;
  p = p * s + 5.189547781e-03f;
  p = p * s + -2.685445175e-02f;
  p = p * s + 1.128360033e-01f;
  p = p * s + -3.761262596e-01f;
  p = p * s + 1.283791661e-01f;
  const vf near = p * x + x;
  // 1 <= |x| < 4: 1 - e^q(|x| - 2.5); erf(4) rounds to 1.
  const vf u = vmin(t, splat(4.0f)) - 2.5f;
  vf q = splat(-5.556501748e-08f);
  q = q * u + 1.614949269e-06f;
  q = q * u + -1.302807050e-05f;
  q = q * u + 7.739043212e-05f;
  q = q * u + -4.206193553e-04f;
  q = q * u + 2.165165963e-03f;
  q = q * u + -1.085822005e-02f;
  q = q * u + -9.438936710e-01f;
  q = q * u + -5.352680683e+00f;
  q = q * u + -7.806815147e+00f;
  const vf far_abs = 1.0f - exp_v(q);
  const vf far = from_bits(bits(far_abs) | (bits(x) & kSignBit));
  return select(is_nan(x), x, select(t < 1.0f, near, far));
}

template <vf (*F)(vf)>
void apply(const float* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vf x;
    __builtin_memcpy(&x, in + i, sizeof x);
    const vf y = F(x);
    __builtin_memcpy(out + i, &y, sizeof y);
  }
  if (i < n) {
    const auto rest = static_cast<unsigned long>(n - i) * sizeof(float);
    vf x = splat(1.0f);
    __builtin_memcpy(&x, in + i, rest);
    const vf y = F(x);
    __builtin_memcpy(out + i, &y, rest);
  }
}

typedef uint16_t vh __attribute__((vector_size(MX_VMATH_BYTES / 2)));
typedef uint32_t vu __attribute__((vector_size(MX_VMATH_BYTES)));

void widen_bf16(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vh h;
    __builtin_memcpy(&h, in + i, sizeof h);
    const vf y = __builtin_bit_cast(vf, __builtin_convertvector(h, vu) << 16);
    __builtin_memcpy(out + i, &y, sizeof y);
  }
  for (; i < n; ++i) {
    const uint32_t b = static_cast<uint32_t>(in[i]) << 16;
    __builtin_memcpy(out + i, &b, sizeof b);
  }
}

// As bf16_t::from_float: NaN -> its upper half with the quiet bit; else
// add 0x7fff plus the lowest kept bit, then truncate.
inline vh round_v(vf x) {
  const vu b = __builtin_bit_cast(vu, x);
  const vu rounded = (b + 0x7fffu + ((b >> 16) & 1u)) >> 16;
  const vu nan = (b >> 16) | 0x40u;
  const vu is_nan = __builtin_bit_cast(vu, (b & 0x7fffffffu) > 0x7f800000u);
  return __builtin_convertvector((is_nan & nan) | (~is_nan & rounded), vh);
}

void round_bf16(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vf x;
    __builtin_memcpy(&x, in + i, sizeof x);
    const vh h = round_v(x);
    __builtin_memcpy(out + i, &h, sizeof h);
  }
  if (i < n) {
    const auto rest = static_cast<unsigned long>(n - i);
    vf x{};
    __builtin_memcpy(&x, in + i, rest * sizeof(float));
    const vh h = round_v(x);
    __builtin_memcpy(out + i, &h, rest * sizeof(uint16_t));
  }
}

void dropout(const float* x, float* y, float* mask, int64_t n, uint64_t first, uint64_t seed,
             uint32_t threshold, float scale) {
  vu lane{};
  for (int l = 0; l < kLanes; ++l) lane[l] = static_cast<uint32_t>(l);
  const vf kept = splat(scale), dropped = splat(0.0f);
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const uint64_t k = first + static_cast<uint64_t>(i);
    // A vector whose indices cross a multiple of 2^32 goes one by one.
    if ((k >> 32) != ((k + kLanes - 1) >> 32)) break;
    const vu bits =
        dropout_bits<vu>(lane + static_cast<uint32_t>(k), static_cast<uint32_t>(k >> 32), seed);
    const vf m = select(bits < threshold, kept, dropped);
    __builtin_memcpy(mask + i, &m, sizeof m);
    if (x != nullptr) {
      vf v;
      __builtin_memcpy(&v, x + i, sizeof v);
      v *= m;
      __builtin_memcpy(y + i, &v, sizeof v);
    }
  }
  for (; i < n; ++i) {
    mask[i] = dropout_keeps(first + static_cast<uint64_t>(i), seed, threshold) ? scale : 0.0f;
    if (x != nullptr) y[i] = x[i] * mask[i];
  }
}

inline float lanes_max(vf v) {
  float m = v[0];
  for (int l = 1; l < kLanes; ++l) m = v[l] > m ? v[l] : m;
  return m;
}
inline double lanes_sum(vf v) {
  double s = 0.0;
  for (int l = 0; l < kLanes; ++l) s += v[l];
  return s;
}
// The float lanes are gathered into the float64 sum every kFlush vectors.
constexpr int64_t kFlush = 1024 / kLanes;

void softmax_row(const float* x, float* y, int64_t n, float inv_t) {
  const int64_t whole = n / kLanes * kLanes;
  vf vtop = splat(-kInf);
  for (int64_t i = 0; i < whole; i += kLanes) {
    vf v;
    __builtin_memcpy(&v, x + i, sizeof v);
    vtop = select((v > vtop) | is_nan(v), v, vtop);  // a NaN wins, as it spreads to the row
  }
  float top = lanes_max(vtop);
  for (int64_t i = whole; i < n; ++i) top = x[i] > top || x[i] != x[i] ? x[i] : top;
  if (top != top) {  // NaN in, NaN out, as exp and the sum would give
    for (int64_t i = 0; i < n; ++i) y[i] = top;
    return;
  }
  double sum = 0.0;
  vf part = splat(0.0f);
  for (int64_t i = 0, run = 0; i < whole; i += kLanes) {
    vf v;
    __builtin_memcpy(&v, x + i, sizeof v);
    v = exp_v((v - top) * inv_t);
    __builtin_memcpy(y + i, &v, sizeof v);
    part += v;
    if (++run == kFlush) {
      sum += lanes_sum(part);
      part = splat(0.0f);
      run = 0;
    }
  }
  sum += lanes_sum(part);
  if (whole < n) {
    // The tail through one vector whose lanes past the row count as 0.
    vf v = splat(top);
    const auto rest = static_cast<unsigned long>(n - whole) * sizeof(float);
    __builtin_memcpy(&v, x + whole, rest);
    vi lane{};
    for (int l = 0; l < kLanes; ++l) lane[l] = l;
    v = select(lane < static_cast<int32_t>(n - whole), exp_v((v - top) * inv_t), splat(0.0f));
    __builtin_memcpy(y + whole, &v, rest);
    sum += lanes_sum(v);
  }
  const auto inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < whole; i += kLanes) {
    vf v;
    __builtin_memcpy(&v, y + i, sizeof v);
    v *= inv;
    __builtin_memcpy(y + i, &v, sizeof v);
  }
  for (int64_t i = whole; i < n; ++i) y[i] *= inv;
}

void softmax_row_backward(const float* y, const float* g, float* dx, int64_t n, float inv_t) {
  const int64_t whole = n / kLanes * kLanes;
  double dot = 0.0;
  vf part = splat(0.0f);
  for (int64_t i = 0, run = 0; i < whole; i += kLanes) {
    vf a, b;
    __builtin_memcpy(&a, y + i, sizeof a);
    __builtin_memcpy(&b, g + i, sizeof b);
    part += a * b;
    if (++run == kFlush) {
      dot += lanes_sum(part);
      part = splat(0.0f);
      run = 0;
    }
  }
  dot += lanes_sum(part);
  for (int64_t i = whole; i < n; ++i) dot += static_cast<double>(y[i]) * static_cast<double>(g[i]);
  const auto s = static_cast<float>(dot);
  for (int64_t i = 0; i < whole; i += kLanes) {
    vf a, b;
    __builtin_memcpy(&a, y + i, sizeof a);
    __builtin_memcpy(&b, g + i, sizeof b);
    const vf d = a * (b - s) * inv_t;
    __builtin_memcpy(dx + i, &d, sizeof d);
  }
  for (int64_t i = whole; i < n; ++i) dx[i] = y[i] * (g[i] - s) * inv_t;
}

inline vf gelu_v(vf x) { return 0.5f * x * (1.0f + erf_v(x * kInvSqrt2)); }

void gelu_backward(const float* x, const float* dy, float* dx, int64_t n) {
  const auto grad = [](vf v, vf g) {
    const vf cdf = 0.5f * (1.0f + erf_v(v * kInvSqrt2));
    const vf pdf = exp_v(-0.5f * v * v) * kInvSqrt2Pi;
    return g * (cdf + v * pdf);
  };
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vf v, g;
    __builtin_memcpy(&v, x + i, sizeof v);
    __builtin_memcpy(&g, dy + i, sizeof g);
    const vf d = grad(v, g);
    __builtin_memcpy(dx + i, &d, sizeof d);
  }
  if (i < n) {
    const auto rest = static_cast<unsigned long>(n - i) * sizeof(float);
    vf v = splat(0.0f), g = splat(0.0f);
    __builtin_memcpy(&v, x + i, rest);
    __builtin_memcpy(&g, dy + i, rest);
    const vf d = grad(v, g);
    __builtin_memcpy(dx + i, &d, rest);
  }
}

// ---- LayerNorm rows: float64 sums over half-width float loads ----

constexpr int kHalf = kLanes / 2;
typedef float vfh __attribute__((vector_size(MX_VMATH_BYTES / 2)));
typedef double vd __attribute__((vector_size(MX_VMATH_BYTES)));

inline vd load_wide(const float* p) {
  vfh h;
  __builtin_memcpy(&h, p, sizeof h);
  return __builtin_convertvector(h, vd);
}
inline double lanes_sum(vd v) {
  double s = 0.0;
  for (int l = 0; l < kHalf; ++l) s += v[l];
  return s;
}

void row_sums(const float* x, int64_t n, double shift, double* sum, double* sq) {
  // Two accumulators each, so consecutive additions do not wait on each other.
  vd s0{}, s1{}, q0{}, q1{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const vd d0 = load_wide(x + i) - shift, d1 = load_wide(x + i + kHalf) - shift;
    s0 += d0;
    s1 += d1;
    q0 += d0 * d0;
    q1 += d1 * d1;
  }
  double a = lanes_sum(s0 + s1), b = lanes_sum(q0 + q1);
  for (; i < n; ++i) {
    const double d = static_cast<double>(x[i]) - shift;
    a += d;
    b += d * d;
  }
  *sum = a;
  *sq = b;
}

// out[i] = f(a[i], b[i], c[i]): whole vectors, then the tail one element at
// a time (f is generic over vf lanes and single floats).
template <typename F>
void map3(const float* a, const float* b, const float* c, float* out, int64_t n, F f) {
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    vf x, y, z;
    __builtin_memcpy(&x, a + i, sizeof x);
    __builtin_memcpy(&y, b + i, sizeof y);
    __builtin_memcpy(&z, c + i, sizeof z);
    const vf r = f(x, y, z);
    __builtin_memcpy(out + i, &r, sizeof r);
  }
  for (; i < n; ++i) out[i] = f(a[i], b[i], c[i]);
}

void normalize_row(const float* x, const float* gamma, const float* beta, float* y, int64_t n,
                   float mean, float rstd) {
  map3(x, gamma, beta, y, n, [=](auto v, auto g, auto b) { return (v - mean) * rstd * g + b; });
}

void norm_grad_sums(const float* x, const float* dy, const float* gamma, int64_t n, double mean,
                    double* sum_g, double* sum_gx) {
  vd s0{}, s1{}, q0{}, q1{};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    const vd g0 = load_wide(dy + i) * load_wide(gamma + i);
    const vd g1 = load_wide(dy + i + kHalf) * load_wide(gamma + i + kHalf);
    s0 += g0;
    s1 += g1;
    q0 += g0 * (load_wide(x + i) - mean);
    q1 += g1 * (load_wide(x + i + kHalf) - mean);
  }
  double a = lanes_sum(s0 + s1), b = lanes_sum(q0 + q1);
  for (; i < n; ++i) {
    const double g = static_cast<double>(dy[i]) * static_cast<double>(gamma[i]);
    a += g;
    b += g * (static_cast<double>(x[i]) - mean);
  }
  *sum_g = a;
  *sum_gx = b;
}

void norm_grad_row(const float* x, const float* dy, const float* gamma, float* dx, int64_t n,
                   float mean, float mean_g, float k, float rstd) {
  map3(x, dy, gamma, dx, n,
       [=](auto v, auto d, auto g) { return (d * g - mean_g - (v - mean) * k) * rstd; });
}

void norm_param_grad_row(const float* x, const float* dy, int64_t n, double mean, double rstd,
                         double* dgamma, double* dbeta) {
  int64_t i = 0;
  for (; i + kHalf <= n; i += kHalf) {
    const vd d = load_wide(dy + i);
    vd g, b;
    __builtin_memcpy(&g, dgamma + i, sizeof g);
    __builtin_memcpy(&b, dbeta + i, sizeof b);
    g += d * (load_wide(x + i) - mean) * rstd;
    b += d;
    __builtin_memcpy(dgamma + i, &g, sizeof g);
    __builtin_memcpy(dbeta + i, &b, sizeof b);
  }
  for (; i < n; ++i) {
    const double d = dy[i];
    dgamma[i] += d * (static_cast<double>(x[i]) - mean) * rstd;
    dbeta[i] += d;
  }
}

constexpr Kernels kKernels{
    apply<exp_v>,      apply<expm1_v>, apply<log_v>,  apply<tanh_v>,        apply<sigmoid_v>,
    apply<softrelu_v>, apply<erf_v>,   apply<gelu_v>, gelu_backward,        widen_bf16,
    round_bf16,        dropout,        softmax_row,   softmax_row_backward, row_sums,
    normalize_row,     norm_grad_sums, norm_grad_row, norm_param_grad_row};

}  // namespace

const Kernels& kernels() { return kKernels; }

}  // namespace mx::op::vmath::MX_VMATH_NS
