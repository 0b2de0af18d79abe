// How a push's payload holds a gradient (Header::compressed): the values as
// they are, MXNet's 2-bit codes (gradient_compression.h), or narrowed to 16
// bits (kvstore.gradient_dtype bfloat16 or float16, half the bytes on the
// wire). Servers widen narrowed pushes to float32 before they sum them, so
// the sum and the update stay float32.
#pragma once

#include <cstdint>

#include "base/dtype.h"

namespace mx::kvstore {

enum class PushEncoding : int32_t { kValues = 0, kTwoBit = 1, kBFloat16 = 2, kFloat16 = 3 };

// The encoding of float32 gradients pushed as `gradient_dtype` (float32:
// kValues). InputError for another type.
PushEncoding narrow_encoding(DType gradient_dtype);
inline bool is_narrow(PushEncoding e) {
  return e == PushEncoding::kBFloat16 || e == PushEncoding::kFloat16;
}
// A header's encoding field, checked: Error naming it when unknown.
PushEncoding encoding_of(int32_t field);

// Rounds n float32 values to 16 bits (round to nearest even, as bf16_t and
// half_t convert), two bytes each in `out`.
void narrow_values(PushEncoding e, const float* in, void* out, int64_t n);
// out[i] = (or, with `add`, +=) the n 16-bit values widened to float32.
void widen_values(PushEncoding e, const void* in, float* out, int64_t n, bool add);

}  // namespace mx::kvstore
