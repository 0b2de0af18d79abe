// IEEE 754 binary16, stored as its bits; arithmetic goes through float.
// Conversions round to nearest even and keep infinities, NaNs and subnormals,
// so values saved by MXNet as float16 load bit-exactly.
#pragma once

#include <cstdint>
#include <cstring>

namespace mx {

struct half_t {
  uint16_t bits = 0;

  half_t() = default;
  half_t(float value) : bits(from_float(value)) {}   // NOLINT: implicit like a built-in float type
  operator float() const { return to_float(bits); }  // NOLINT

  static half_t from_bits(uint16_t b) {
    half_t h;
    h.bits = b;
    return h;
  }

  static uint16_t from_float(float value) {
    uint32_t f;
    std::memcpy(&f, &value, sizeof f);
    const uint32_t sign = (f >> 16) & 0x8000u;
    const uint32_t abs = f & 0x7fffffffu;
    if (abs >= 0x7f800000u) {  // inf or NaN
      const uint32_t nan = abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0u;
      return static_cast<uint16_t>(sign | 0x7c00u | nan);
    }
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (abs < 0x38800000u) {                                      // subnormal half (or zero)
      if (abs < 0x33000000u) return static_cast<uint16_t>(sign);  // below half the smallest
      const uint32_t exponent = abs >> 23;
      const uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
      const uint32_t shift = 126u - exponent;  // 14 + (113 - exponent) - 1
      uint32_t half_m = mantissa >> shift;
      const uint32_t rest = mantissa & ((1u << shift) - 1u);
      const uint32_t halfway = 1u << (shift - 1u);
      if (rest > halfway || (rest == halfway && (half_m & 1u))) ++half_m;
      return static_cast<uint16_t>(sign | half_m);
    }
    // Normal: rebias the exponent, round the mantissa to 10 bits.
    uint32_t h = ((abs - 0x38000000u) >> 13);
    const uint32_t rest = abs & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) ++h;
    return static_cast<uint16_t>(sign | h);
  }

  static float to_float(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    uint32_t f;
    if (exponent == 0x1fu) {
      f = sign | 0x7f800000u | (mantissa << 13);
    } else if (exponent != 0) {
      f = sign | ((exponent + 112u) << 23) | (mantissa << 13);
    } else if (mantissa == 0) {
      f = sign;
    } else {  // subnormal: normalise
      uint32_t e = 113;
      while ((mantissa & 0x400u) == 0) {
        mantissa <<= 1;
        --e;
      }
      f = sign | (e << 23) | ((mantissa & 0x3ffu) << 13);
    }
    float value;
    std::memcpy(&value, &f, sizeof value);
    return value;
  }
};

}  // namespace mx
