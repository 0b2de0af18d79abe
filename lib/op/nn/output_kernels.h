// The gradient functors of the output (loss) layers, SoftmaxOutput and the
// regression outputs, shared by their CPU kernels and their GPU kernels
// (softmax_gpu.cu); tests/op/test_nn_kernels_host.cc runs them on the CPU.
#pragma once

#include <cstdint>

#include "op/nn/nn_math.h"
#include "op/nn/softmax_kernels.h"
#include "op/tensor_ref.h"

namespace mx::op {

// A label as a class index (as MXNet's static_cast<int>), without undefined
// behaviour for NaN or huge values: those match no class.
inline constexpr int kNoClass = -2147483647 - 1;
template <typename T>
MX_HOST_DEVICE inline int class_of(T label) {
  return label > T(-2147483648.0) && label < T(2147483647.0) ? static_cast<int>(label) : kNoClass;
}

// Labels that are probabilities (shaped like the output):
// dx[i] (req) (y - label) * scale * out_grad.
template <typename T>
struct SoftmaxOutputProbGrad {
  const T* y;
  const T* label;
  const T* og;  // null: no output gradient
  T* dx;
  T scale;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(dx + i, req, (y[i] - label[i]) * scale * (og ? og[i] : T(1)));
  }
};

// Class labels, one per (outer, inner) position: element i of the gradient
// of cross entropy against the target 1 - alpha at the label and
// alpha / (k - 1) elsewhere; ignored labels (use_ignore) get 0.
template <typename T>
struct SoftmaxOutputGrad {
  const T* y;
  const T* label;
  const T* og;  // null: no output gradient
  T* dx;
  SoftmaxLayout l;
  int ignore;
  bool use_ignore;
  double alpha, off_target;
  // The gradient's scale; with valid_count (normalization 'valid', device or
  // host memory as the kernel runs) it is divided by max(*valid_count, 1).
  double scale;
  const int64_t* valid_count;
  OpReq req;

  MX_HOST_DEVICE void operator()(int64_t i) const {
    const int64_t block = l.size * l.inner;
    const int64_t o = i / block, k = (i % block) / l.inner, j = i % l.inner;
    const int hot = class_of(label[o * l.inner + j]);
    double s = scale;
    if (valid_count) s = scale / static_cast<double>(*valid_count > 1 ? *valid_count : 1);
    double g = 0.0;
    if (!(use_ignore && hot == ignore)) {
      const double target = k == hot ? 1.0 - alpha : off_target;
      g = (static_cast<double>(y[i]) - target) * s;
    }
    if (og) g *= static_cast<double>(og[i]);
    assign(dx + i, req, static_cast<T>(g));
  }
};

// The number of labels that are not `ignore`, as a block of threads counts
// them: each thread its labels e = thread, thread + threads, ...
template <typename T>
struct ValidLabelCount {
  const T* label;
  int64_t n;
  int ignore;
  MX_HOST_DEVICE int64_t partial(int64_t thread, int64_t threads) const {
    int64_t valid = 0;
    for (int64_t e = thread; e < n; e += threads) valid += class_of(label[e]) != ignore ? 1 : 0;
    return valid;
  }
};

enum class Regression { kLinear, kLogistic, kMAE };

// The forward value: sigmoid for logistic regression, else the identity.
template <typename T>
MX_HOST_DEVICE inline T regression_value(Regression kind, T x) {
  return kind == Regression::kLogistic ? T(1) / (T(1) + nnmath::exp(-x)) : x;
}

// The gradient from the output y and the label t, `scale` included.
template <typename T>
MX_HOST_DEVICE inline T regression_gradient(Regression kind, T scale, T y, T t) {
  const T d = y - t;
  if (kind == Regression::kMAE) return scale * (d > T(0) ? T(1) : (d < T(0) ? T(-1) : T(0)));
  return scale * d;
}

template <typename T>
struct RegressionForward {
  Regression kind;
  const T* x;
  T* y;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(y + i, req, regression_value(kind, x[i]));
  }
};

template <typename T>
struct RegressionBackward {
  Regression kind;
  T scale;
  const T* y;
  const T* label;
  T* dx;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    assign(dx + i, req, regression_gradient(kind, scale, y[i], label[i]));
  }
};

}  // namespace mx::op
