// The AVX2 + FMA kernels (this file is compiled with -mavx2 -mfma).
#define MX_VMATH_BYTES 32
#define MX_VMATH_NS avx2
#include "op/vmath/vmath_simd.h"
