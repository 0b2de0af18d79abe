// The AVX-512 kernels (this file is compiled with -mavx512f).
#define MX_VMATH_BYTES 64
#define MX_VMATH_NS avx512
#include "op/vmath/vmath_simd.h"
