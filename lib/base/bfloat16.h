// bfloat16 (the upper half of an IEEE float32: 8 exponent bits, 7 mantissa
// bits), stored as its bits; arithmetic goes through float. Conversion from
// float rounds to nearest even and keeps NaNs quiet, as oneDNN's and MXNet's
// (mshadow::bfloat::bf16_t) do, so arrays exchanged with them match bit for bit.
#pragma once

#include <cstdint>
#include <cstring>
#include <limits>

namespace mx {

struct bf16_t {
  uint16_t bits = 0;

  bf16_t() = default;
  bf16_t(float value) : bits(from_float(value)) {}   // NOLINT: implicit like a built-in float type
  operator float() const { return to_float(bits); }  // NOLINT

  static bf16_t from_bits(uint16_t b) {
    bf16_t v;
    v.bits = b;
    return v;
  }

  static uint16_t from_float(float value) {
    uint32_t f;
    std::memcpy(&f, &value, sizeof f);
    if ((f & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((f >> 16) | 0x40u);  // NaN
    f += 0x7fffu + ((f >> 16) & 1u);  // round to nearest even
    return static_cast<uint16_t>(f >> 16);
  }

  static float to_float(uint16_t b) {
    const uint32_t f = static_cast<uint32_t>(b) << 16;
    float value;
    std::memcpy(&value, &f, sizeof value);
    return value;
  }

  // Compound assignment through float, so kernels written for float
  // (`sum += x`, `*dst += value`) compile for bfloat16 storage.
  bf16_t& operator+=(float v) { return *this = bf16_t(float(*this) + v); }
  bf16_t& operator-=(float v) { return *this = bf16_t(float(*this) - v); }
  bf16_t& operator*=(float v) { return *this = bf16_t(float(*this) * v); }
  bf16_t& operator/=(float v) { return *this = bf16_t(float(*this) / v); }
};

}  // namespace mx

// The limits kernels take (max pooling starts from lowest(), reductions from
// infinity()): without these std::numeric_limits<bf16_t> would give zeros.
namespace std {
template <>
struct numeric_limits<mx::bf16_t> {
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr int digits = 8;
  static mx::bf16_t lowest() { return mx::bf16_t::from_bits(0xff7f); }
  static mx::bf16_t max() { return mx::bf16_t::from_bits(0x7f7f); }
  static mx::bf16_t min() { return mx::bf16_t::from_bits(0x0080); }
  static mx::bf16_t epsilon() { return mx::bf16_t::from_bits(0x3c00); }  // 2^-7
  static mx::bf16_t infinity() { return mx::bf16_t::from_bits(0x7f80); }
  static mx::bf16_t quiet_NaN() { return mx::bf16_t::from_bits(0x7fc0); }
};
}  // namespace std
