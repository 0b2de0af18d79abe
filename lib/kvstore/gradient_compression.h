// MXNet 1.x's 2-bit gradient compression (src/kvstore/gradient_compression).
//
// Per element: residual += grad; residual >= t gives code 11 and
// residual -= t; residual <= -t gives code 10 and residual += t; otherwise
// 00. Sixteen codes are packed into each 32-bit word (four per byte, the
// first element of a byte in its most significant pair), so the packed form
// of n float32 values is ceil(n / 16) words. The worker keeps the residual
// per key; the server decompresses each push to {-t, 0, +t} before summing.
#pragma once

#include <cstdint>
#include <string>

namespace mx::kvstore {

struct CompressionSpec {
  std::string type = "none";  // "none" or "2bit"
  float threshold = 0.5f;     // MXNet's default
  bool enabled() const { return type == "2bit"; }
};

// Throws InputError unless type is "none" or "2bit" and threshold > 0.
void validate(const CompressionSpec& spec);

// Words of packed codes for n values.
inline int64_t compressed_words(int64_t n) { return (n + 15) / 16; }

// Adds `grad` to `residual` and writes the codes of n values to `packed`
// (compressed_words(n) words, overwritten).
void quantize_2bit(const float* grad, float* residual, uint32_t* packed, int64_t n,
                   float threshold);
// Writes the n values the codes stand for into `out`.
void dequantize_2bit(const uint32_t* packed, float* out, int64_t n, float threshold);
// Adds the n values the codes stand for to `out` (the server's merge).
void dequantize_2bit_add(const uint32_t* packed, float* out, int64_t n, float threshold);

}  // namespace mx::kvstore
