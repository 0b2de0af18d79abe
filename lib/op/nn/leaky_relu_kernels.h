// LeakyReLU's per-element functions and the functors of its kernels, shared
// by the CPU kernel (where it has no vectorised path) and the GPU kernels
// (lib/op/cuda/activation_gpu.cu); tests/op/test_nn_kernels_host.cc runs the
// functors on the CPU against the CPU operator.
#pragma once

#include <cstdint>
#include <numbers>

#include "op/nn/nn_math.h"
#include "op/tensor_ref.h"

namespace mx::op {

enum class LeakyType { kRRelu, kLeaky, kPRelu, kElu, kSelu, kGelu };

// SELU's constants (Klambauer et al. 2017), as in MXNet.
inline constexpr double kSeluLambda = 1.0507009873554804934193349852946;
inline constexpr double kSeluAlpha = 1.6732632423543772848170429916717;
// GELU's 1/sqrt(2) and 1/sqrt(2 pi).
inline constexpr double kInvSqrt2 = std::numbers::sqrt2 / 2;
inline constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;

template <typename T>
MX_HOST_DEVICE inline T leaky_value(LeakyType t, T slope, T x) {
  switch (t) {
    case LeakyType::kLeaky: return x > T(0) ? x : slope * x;
    case LeakyType::kElu: return x > T(0) ? x : slope * nnmath::expm1(x);
    case LeakyType::kSelu:
      return static_cast<T>(kSeluLambda) *
             (x > T(0) ? x : static_cast<T>(kSeluAlpha) * nnmath::expm1(x));
    case LeakyType::kGelu: return T(0.5) * x * (T(1) + nnmath::erf(x * static_cast<T>(kInvSqrt2)));
    default: return x;
  }
}

template <typename T>
MX_HOST_DEVICE inline T leaky_derivative(LeakyType t, T slope, T x) {
  switch (t) {
    case LeakyType::kLeaky: return x > T(0) ? T(1) : slope;
    case LeakyType::kElu: return x > T(0) ? T(1) : slope * nnmath::exp(x);
    case LeakyType::kSelu:
      return static_cast<T>(kSeluLambda) *
             (x > T(0) ? T(1) : static_cast<T>(kSeluAlpha) * nnmath::exp(x));
    case LeakyType::kGelu: {
      const T cdf = T(0.5) * (T(1) + nnmath::erf(x * static_cast<T>(kInvSqrt2)));
      const T pdf = nnmath::exp(T(-0.5) * x * x) * static_cast<T>(kInvSqrt2Pi);
      return cdf + x * pdf;
    }
    default: return T(1);
  }
}

// prelu: the channel (axis 1) of element i and the size of gamma (1: one
// slope shared by all elements).
struct PreluChannel {
  int64_t channels, inner;
  MX_HOST_DEVICE int64_t operator()(int64_t i) const {
    return channels == 1 ? 0 : (i / inner) % channels;
  }
};

// leaky, elu, selu, gelu: y[i] (req) f(x[i]).
template <typename T>
struct LeakyForward {
  LeakyType type;
  T slope;
  const T* x;
  T* y;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(y + i, req, leaky_value(type, slope, x[i]));
  }
};

template <typename T>
struct LeakyBackward {
  LeakyType type;
  T slope;
  const T* x;
  const T* dy;
  T* dx;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(dx + i, req, dy[i] * leaky_derivative(type, slope, x[i]));
  }
};

template <typename T>
struct PreluForward {
  PreluChannel channel;
  const T* x;
  const T* gamma;
  T* y;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(y + i, req, x[i] > T(0) ? x[i] : gamma[channel(i)] * x[i]);
  }
};

template <typename T>
struct PreluBackwardData {
  PreluChannel channel;
  const T* x;
  const T* gamma;
  const T* dy;
  T* dx;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(dx + i, req, x[i] > T(0) ? dy[i] : gamma[channel(i)] * dy[i]);
  }
};

// dgamma[k] (req) the sum of x * dy over the non-positive elements of
// channel k of data (outer, channels, inner); with one shared slope, output
// 0 sums every channel. The CPU calls operator()(k) per output (sums in T,
// in order); the GPU runs one block per output, each thread summing its
// share (partial, in float64) and thread 0 storing the block's sum.
template <typename T>
struct PreluGammaGrad {
  int64_t outer, channels, inner;
  bool shared;
  const T* x;
  const T* dy;
  T* dgamma;
  OpReq req;

  MX_HOST_DEVICE T channel_sum(int64_t k) const {
    T sum = 0;
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t base = (o * channels + k) * inner;
      for (int64_t i = base; i < base + inner; ++i)
        if (!(x[i] > T(0))) sum += x[i] * dy[i];
    }
    return sum;
  }
  // The number of outputs (calls).
  MX_HOST_DEVICE int64_t size() const { return shared ? 1 : channels; }
  // Thread `thread` of `threads`' part of output k: the elements
  // e = thread, thread + threads, ... of its channels' outer * inner each.
  MX_HOST_DEVICE double partial(int64_t k, int64_t thread, int64_t threads) const {
    const int64_t first = shared ? 0 : k, last = shared ? channels : k + 1;
    double sum = 0;
    for (int64_t c = first; c < last; ++c) {
      for (int64_t e = thread; e < outer * inner; e += threads) {
        const int64_t i = ((e / inner) * channels + c) * inner + e % inner;
        if (!(x[i] > T(0))) sum += static_cast<double>(x[i] * dy[i]);
      }
    }
    return sum;
  }
  MX_HOST_DEVICE void store(int64_t k, double sum) const {
    assign(dgamma + k, req, static_cast<T>(sum));
  }
  MX_HOST_DEVICE void operator()(int64_t k) const {
    if (!shared) {
      assign(dgamma + k, req, channel_sum(k));
      return;
    }
    T total = 0;
    for (int64_t c = 0; c < channels; ++c) total += channel_sum(c);
    assign(dgamma, req, total);
  }
};

}  // namespace mx::op
