// Element-wise kernels behind NDArray arithmetic, one implementation per
// device (elementwise_cpu.cc, elementwise_gpu.cu) over the same functors.
#pragma once

#include <cstdint>
#include <type_traits>

#include "base/dtype.h"
#include "base/host_device.h"
#include "engine/engine.h"

namespace mx {

enum class BinaryOp { kAdd, kSub, kMul, kDiv };
// kRSub is s - a, kRDiv is s / a.
enum class ScalarOp { kAdd, kSub, kRSub, kMul, kDiv, kRDiv };

// The type arithmetic on T is done in: float for float16 and bfloat16, T otherwise.
template <typename T>
using ComputeType =
    std::conditional_t<std::is_same_v<T, half_t> || std::is_same_v<T, bf16_t>, float, T>;

// Integer division that cannot trap: x / 0 is 0 (as NumPy gives), and
// INT_MIN / -1 wraps instead of raising SIGFPE.
template <typename C>
MX_HOST_DEVICE inline C safe_divide(C a, C b) {
  if constexpr (std::is_integral_v<C>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<C>) {
      if (b == -1) return static_cast<C>(0 - static_cast<std::make_unsigned_t<C>>(a));
    }
  }
  return a / b;
}

template <typename C>
MX_HOST_DEVICE inline C apply_binary(BinaryOp op, C a, C b) {
  switch (op) {
    case BinaryOp::kAdd: return static_cast<C>(a + b);
    case BinaryOp::kSub: return static_cast<C>(a - b);
    case BinaryOp::kMul: return static_cast<C>(a * b);
    case BinaryOp::kDiv: return safe_divide(a, b);
  }
  return a;
}

template <typename C>
MX_HOST_DEVICE inline C apply_scalar(ScalarOp op, C a, C s) {
  switch (op) {
    case ScalarOp::kAdd: return static_cast<C>(a + s);
    case ScalarOp::kSub: return static_cast<C>(a - s);
    case ScalarOp::kRSub: return static_cast<C>(s - a);
    case ScalarOp::kMul: return static_cast<C>(a * s);
    case ScalarOp::kDiv: return safe_divide(a, s);
    case ScalarOp::kRDiv: return safe_divide(s, a);
  }
  return a;
}

// Each kernel runs n elements on the device of rctx (on its stream on a GPU).
void binary_kernel_cpu(BinaryOp op, DType dtype, const void* a, const void* b, void* out,
                       int64_t n);
void scalar_kernel_cpu(ScalarOp op, DType dtype, const void* a, double s, void* out, int64_t n);
void fill_kernel_cpu(DType dtype, void* out, double value, int64_t n);

void binary_kernel_gpu(BinaryOp op, DType dtype, const void* a, const void* b, void* out, int64_t n,
                       void* stream);
void scalar_kernel_gpu(ScalarOp op, DType dtype, const void* a, double s, void* out, int64_t n,
                       void* stream);
void fill_kernel_gpu(DType dtype, void* out, double value, int64_t n, void* stream);

}  // namespace mx
