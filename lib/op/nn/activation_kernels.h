// Activation's per-element functions and the functors of its kernels, shared
// by the CPU kernel (types without a vectorised path) and the GPU kernels
// (lib/op/cuda/activation_gpu.cu); tests/op/test_nn_kernels_host.cc runs the
// functors on the CPU against the CPU operator.
#pragma once

#include <cstdint>
#include <type_traits>

#include "base/bfloat16.h"
#include "op/compute_type.h"
#include "op/nn/activation_table.h"
#include "op/nn/nn_math.h"
#include "op/tensor_ref.h"

namespace mx::op {

template <typename T>
MX_HOST_DEVICE inline T activate(ActType t, T x) {
  switch (t) {
    case ActType::kRelu: return x > T(0) ? x : T(0);
    case ActType::kSigmoid: return T(1) / (T(1) + nnmath::exp(-x));
    case ActType::kTanh: return nnmath::tanh(x);
    // log(1 + e^x) without overflow for large x.
    case ActType::kSoftRelu: return x > T(20) ? x : nnmath::log1p(nnmath::exp(x));
    case ActType::kSoftSign: return x / (T(1) + nnmath::abs(x));
  }
  return x;
}

// The derivative from the output alone, so the input need not be kept for
// the backward pass and the activation can run in place (as MXNet's does).
template <typename T>
MX_HOST_DEVICE inline T derivative(ActType t, T y) {
  switch (t) {
    case ActType::kRelu: return y > T(0) ? T(1) : T(0);
    case ActType::kSigmoid: return y * (T(1) - y);
    case ActType::kTanh: return T(1) - y * y;
    case ActType::kSoftRelu: return -nnmath::expm1(-y);  // sigmoid(x) = 1 - e^-y, y = log(1 + e^x)
    case ActType::kSoftSign: {
      T d = T(1) - nnmath::abs(y);  // 1 / (1 + |x|)
      return d * d;
    }
  }
  return T(0);
}

// The type a functor computes T in: float for 16-bit float storage.
template <typename T>
using ActCompute = KernelCompute<T>;

// y[i] (req) activate(x[i]); in place (y == x) each element is read first.
template <typename T>
struct ActivationForward {
  ActType act;
  const T* x;
  T* y;
  OpReq req;
  // load/store: four loads in flight per GPU thread (launch.cuh).
  MX_HOST_DEVICE T load(int64_t i) const { return x[i]; }
  MX_HOST_DEVICE void store(int64_t i, T xi) const {
    assign(y + i, req, T(activate<ActCompute<T>>(act, xi)));
  }
  MX_HOST_DEVICE void operator()(int64_t i) const { store(i, load(i)); }
};

// dx[i] (req) g[i] * derivative(y[i]); dx may be g itself.
template <typename T>
struct ActivationBackward {
  ActType act;
  const T* g;
  const T* y;
  T* dx;
  OpReq req;
  struct Loaded {
    T g, y;
  };
  MX_HOST_DEVICE Loaded load(int64_t i) const { return {g[i], y[i]}; }
  MX_HOST_DEVICE void store(int64_t i, const Loaded& v) const {
    using C = ActCompute<T>;
    assign(dx + i, req, T(C(v.g) * derivative<C>(act, v.y)));
  }
  MX_HOST_DEVICE void operator()(int64_t i) const { store(i, load(i)); }
};

}  // namespace mx::op
