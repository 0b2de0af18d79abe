#include "kvstore/gradient_compression.h"

#include <cstring>

#include "base/error.h"

namespace mx::kvstore {
namespace {

// The two bits of element i of a 16-element block, within its byte.
constexpr uint8_t kPositive[4] = {0xc0, 0x30, 0x0c, 0x03};
constexpr uint8_t kNegative[4] = {0x80, 0x20, 0x08, 0x02};

// The value element i of a block stands for.
inline float decode(const uint8_t* block_bytes, int64_t i, float threshold) {
  const uint8_t byte = block_bytes[i >> 2];
  const uint8_t masked = byte & kPositive[i & 3];
  if (masked == kPositive[i & 3]) return threshold;
  if (masked == kNegative[i & 3]) return -threshold;
  return 0.0f;
}

}  // namespace

void validate(const CompressionSpec& spec) {
  if (spec.type != "none" && spec.type != "2bit")
    throw InputError("gradient compression type '" + spec.type +
                     "' is not known; use 'none' or '2bit'");
  if (spec.enabled() && !(spec.threshold > 0.0f))
    throw InputError("gradient compression threshold must be > 0, not " +
                     std::to_string(spec.threshold));
}

void quantize_2bit(const float* grad, float* residual, uint32_t* packed, int64_t n,
                   float threshold) {
  const int64_t words = compressed_words(n);
  std::memset(packed, 0, static_cast<size_t>(words) * sizeof(uint32_t));
  auto* bytes = reinterpret_cast<uint8_t*>(packed);
  for (int64_t i = 0; i < n; ++i) {
    uint8_t& byte = bytes[(i >> 4) * 4 + ((i & 15) >> 2)];
    float r = residual[i] + grad[i];
    if (r >= threshold) {
      byte |= kPositive[i & 3];
      r -= threshold;
    } else if (r <= -threshold) {
      byte |= kNegative[i & 3];
      r += threshold;
    }
    residual[i] = r;
  }
}

void dequantize_2bit(const uint32_t* packed, float* out, int64_t n, float threshold) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(packed);
  for (int64_t i = 0; i < n; ++i) out[i] = decode(bytes + (i >> 4) * 4, i & 15, threshold);
}

void dequantize_2bit_add(const uint32_t* packed, float* out, int64_t n, float threshold) {
  const auto* bytes = reinterpret_cast<const uint8_t*>(packed);
  for (int64_t i = 0; i < n; ++i) out[i] += decode(bytes + (i >> 4) * 4, i & 15, threshold);
}

}  // namespace mx::kvstore
