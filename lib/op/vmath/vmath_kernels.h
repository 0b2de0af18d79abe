// The table of one instruction set's kernels. Kept apart from vmath.h so the
// translation units built for AVX2/AVX-512 see no inline function that
// other code shares (the linker could keep their wide-instruction copy).
#pragma once

#include <cstdint>

namespace mx::op::vmath {

// out[i] = f(in[i]) for i in [0, n); in and out may be the same array.
using UnaryFn = void (*)(const float* in, float* out, int64_t n);

// bfloat16 storage (its bits) to float and back, rounding to nearest even
// and keeping NaNs quiet as base/bfloat16.h's bf16_t does, bit for bit.
using WidenFn = void (*)(const uint16_t* in, float* out, int64_t n);
using NarrowFn = void (*)(const float* in, uint16_t* out, int64_t n);

// Dropout in one pass: mask[i] = scale where element first + i of the
// stream `seed` is kept (dropout_bits.h), else 0; y[i] = x[i] * mask[i]
// unless x is null (the mask alone). y may be x.
using DropoutFn = void (*)(const float* x, float* y, float* mask, int64_t n, uint64_t first,
                           uint64_t seed, uint32_t threshold, float scale);

// One row of softmax: y = exp((x - max(x)) * inv_t) / sum, n > 0; y may be
// x. The sum in float lanes, gathered in float64 every 1024 elements.
using SoftmaxRowFn = void (*)(const float* x, float* y, int64_t n, float inv_t);
// Its gradient: dx = y * (g - sum(g * y)) * inv_t; dx may be g.
using SoftmaxRowBackwardFn = void (*)(const float* y, const float* g, float* dx, int64_t n,
                                      float inv_t);

// GELU's 1/sqrt(2) and 1/sqrt(2 pi), for the kernels of every instruction set.
inline constexpr float kInvSqrt2 = 0.707106781186547524f;
inline constexpr float kInvSqrt2Pi = 0.398942280401432678f;

// GELU with the exact normal CDF: y = x Phi(x), Phi(x) = (1 + erf(x / sqrt 2)) / 2.
using GeluFn = void (*)(const float* x, float* y, int64_t n);
// Its gradient: dx = dy (Phi(x) + x phi(x)), phi the normal density; dx may be dy.
using GeluBackwardFn = void (*)(const float* x, const float* dy, float* dx, int64_t n);

// LayerNorm's contiguous rows, each kernel one pass over a row (forward:
// row_sums, then normalize_row; backward: norm_grad_sums, norm_grad_row and
// norm_param_grad_row). The sums are float64 lanes (the statistics of a row
// whose mean is large against its spread need them).
//   row_sums: sum(x - shift) and sum((x - shift)^2).
using RowSumsFn = void (*)(const float* x, int64_t n, double shift, double* sum, double* sq);
//   normalize_row: y = (x - mean) * rstd * gamma + beta.
using NormalizeRowFn = void (*)(const float* x, const float* gamma, const float* beta, float* y,
                                int64_t n, float mean, float rstd);
//   norm_grad_sums: sum(g) and sum(g * (x - mean)), g = dy * gamma.
using NormGradSumsFn = void (*)(const float* x, const float* dy, const float* gamma, int64_t n,
                                double mean, double* sum_g, double* sum_gx);
//   norm_grad_row: dx = (dy * gamma - mean_g - (x - mean) * k) * rstd; dx may be dy.
using NormGradRowFn = void (*)(const float* x, const float* dy, const float* gamma, float* dx,
                               int64_t n, float mean, float mean_g, float k, float rstd);
//   norm_param_grad_row: dgamma[i] += dy * (x - mean) * rstd, dbeta[i] += dy.
using NormParamGradRowFn = void (*)(const float* x, const float* dy, int64_t n, double mean,
                                    double rstd, double* dgamma, double* dbeta);

struct Kernels {
  UnaryFn exp, expm1, log, tanh, sigmoid, softrelu, erf;
  GeluFn gelu;
  GeluBackwardFn gelu_backward;
  WidenFn widen_bf16;
  NarrowFn round_bf16;
  DropoutFn dropout;
  SoftmaxRowFn softmax_row;
  SoftmaxRowBackwardFn softmax_row_backward;
  RowSumsFn row_sums;
  NormalizeRowFn normalize_row;
  NormGradSumsFn norm_grad_sums;
  NormGradRowFn norm_grad_row;
  NormParamGradRowFn norm_param_grad_row;
};

}  // namespace mx::op::vmath
