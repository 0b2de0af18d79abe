#include "kvstore/push_encoding.h"

#include <algorithm>

#include "base/error.h"
#include "base/half.h"
#include "base/strings.h"
#include "op/kernel_util.h"

namespace mx::kvstore {

PushEncoding narrow_encoding(DType gradient_dtype) {
  switch (gradient_dtype) {
    case DType::kFloat32: return PushEncoding::kValues;
    case DType::kBFloat16: return PushEncoding::kBFloat16;
    case DType::kFloat16: return PushEncoding::kFloat16;
    default: break;
  }
  throw InputError(str("gradients are pushed as float32, bfloat16 or float16, not ",
                       dtype_name(gradient_dtype)));
}

PushEncoding encoding_of(int32_t field) {
  if (field < 0 || field > static_cast<int32_t>(PushEncoding::kFloat16))
    throw Error(str("kvstore: a push's encoding ", field, " is unknown"));
  return static_cast<PushEncoding>(field);
}

void narrow_values(PushEncoding e, const float* in, void* out, int64_t n) {
  if (e == PushEncoding::kBFloat16) {
    op::round_block(in, static_cast<bf16_t*>(out), n);
    return;
  }
  MX_CHECK(e == PushEncoding::kFloat16, "narrow_values of a push that is not narrowed");
  auto* h = static_cast<half_t*>(out);
  for (int64_t i = 0; i < n; ++i) h[i] = half_t(in[i]);
}

void widen_values(PushEncoding e, const void* in, float* out, int64_t n, bool add) {
  MX_CHECK(is_narrow(e), "widen_values of a push that is not narrowed");
  // Blocks through a float buffer: one vectorised widening (bfloat16), then the sum.
  float block[op::kMapBlock];
  for (int64_t b = 0; b < n; b += op::kMapBlock) {
    const int64_t len = std::min(op::kMapBlock, n - b);
    float* dst = add ? block : out + b;
    if (e == PushEncoding::kBFloat16) {
      op::widen_block(static_cast<const bf16_t*>(in) + b, dst, len);
    } else {
      const half_t* h = static_cast<const half_t*>(in) + b;
      for (int64_t i = 0; i < len; ++i) dst[i] = h[i];
    }
    if (add)
      for (int64_t i = 0; i < len; ++i) out[b + i] += block[i];
  }
}

}  // namespace mx::kvstore
