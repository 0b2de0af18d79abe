// Vectorised float32 math over arrays: exp, expm1, log, tanh, sigmoid,
// softrelu (log(1 + e^x)) and erf, and bfloat16's conversions to and from
// float; and the row kernels of a few operators (GELU, softmax, Dropout,
// LayerNorm: vmath_kernels.h). Each has AVX-512, AVX2 and portable
// scalar (std::) versions; the widest one this CPU runs is chosen once, at
// first use. The SIMD versions of the functions agree with the correctly
// rounded result within a few ulp, including at +-inf, NaN and denormals.
#pragma once

#include <cstdint>

#include "op/vmath/vmath_kernels.h"

namespace mx::op::vmath {

enum class Isa { kScalar, kAvx2, kAvx512 };

// Whether this build and this CPU can run `isa`.
bool supported(Isa isa);
// The kernels of one instruction set (which must be supported).
const Kernels& kernels(Isa isa);
// The widest supported instruction set, or the one MX_VMATH_ISA names
// (scalar, avx2, avx512) if set and supported; decided once.
Isa active_isa();
const char* isa_name(Isa isa);

inline const Kernels& active() {
  static const Kernels& k = kernels(active_isa());
  return k;
}

inline void exp(const float* in, float* out, int64_t n) { active().exp(in, out, n); }
inline void expm1(const float* in, float* out, int64_t n) { active().expm1(in, out, n); }
inline void log(const float* in, float* out, int64_t n) { active().log(in, out, n); }
inline void tanh(const float* in, float* out, int64_t n) { active().tanh(in, out, n); }
inline void sigmoid(const float* in, float* out, int64_t n) { active().sigmoid(in, out, n); }
inline void softrelu(const float* in, float* out, int64_t n) { active().softrelu(in, out, n); }
inline void erf(const float* in, float* out, int64_t n) { active().erf(in, out, n); }
inline void widen_bf16(const uint16_t* in, float* out, int64_t n) {
  active().widen_bf16(in, out, n);
}
inline void round_bf16(const float* in, uint16_t* out, int64_t n) {
  active().round_bf16(in, out, n);
}

}  // namespace mx::op::vmath
