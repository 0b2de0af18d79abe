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

struct Kernels {
  UnaryFn exp, expm1, log, tanh, sigmoid, softrelu, erf;
  WidenFn widen_bf16;
  NarrowFn round_bf16;
  DropoutFn dropout;
  SoftmaxRowFn softmax_row;
  SoftmaxRowBackwardFn softmax_row_backward;
};

}  // namespace mx::op::vmath
