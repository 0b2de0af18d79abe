// The per-element step of every optimizer update, as MX_HOST_DEVICE functors
// that both the CPU loop (fused_update.h) and the CUDA kernel
// (update_gpu.cu) run, so the optimizer tests check the arithmetic the GPU
// runs. The formulas and their MXNet origins are in each optimizer's .cc.
//
// Each optimizer has an Args struct of host doubles (what push_update
// computes from the step: the StepScalars every optimizer shares, and its
// own) whose Step<T> is the typed functor: built once per update on the
// host, then copied by value into the kernel.
#pragma once

#include <cmath>
#include <cstdint>

#include "base/host_device.h"

namespace mx::optim::kernels {

inline constexpr int kMaxStates = 3;

// The arrays of one update: weight, gradient and up to kMaxStates states,
// all of one length and type.
template <typename T>
struct UpdateArrays {
  T* w = nullptr;
  const T* g = nullptr;
  T* s[kMaxStates] = {};
};

// mshadow_op::clip: bound the value to [-bound, bound].
template <typename T>
MX_HOST_DEVICE inline T clip(T x, T bound) {
  return x > bound ? bound : (x < -bound ? -bound : x);
}

template <typename T>
MX_HOST_DEVICE inline T square_root(T x) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(T) == sizeof(float))
    return sqrtf(x);
  else
    return sqrt(x);
#else
  return std::sqrt(x);
#endif
}

// --- The hyper-parameters every step takes -----------------------------------
// MXNet's lr, wd, rescale_grad and clip_gradient as host doubles (what
// Optimizer::scalars computes for one update), shared by every optimizer's
// Args; each Args adds its own.
struct StepScalars {
  double lr, wd, rescale, clip;  // clip < 0: no clipping
};
// The same in the step's type T, with the gradient they give.
template <typename T>
struct TypedScalars {
  T lr, wd, rs, c;
  bool clipping;
  explicit TypedScalars(const StepScalars& s)
      : lr(T(s.lr)), wd(T(s.wd)), rs(T(s.rescale)), c(T(s.clip)), clipping(s.clip >= 0) {}
  // rescale_grad * g, clipped to [-clip, clip] when clipping is on.
  MX_HOST_DEVICE T grad(T g) const { return clipping ? clip(rs * g, c) : rs * g; }
};

// --- SGD (momentum optional) -------------------------------------------------
template <typename T>
struct SGDStep;
struct SGDArgs {
  StepScalars s;
  double momentum;
  bool has_mom;
  template <typename T>
  using Step = SGDStep<T>;
};
template <typename T>
struct SGDStep {
  TypedScalars<T> s;
  T mo;
  bool has_mom;
  explicit SGDStep(const SGDArgs& a) : s(a.s), mo(T(a.momentum)), has_mom(a.has_mom) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    const T wi = a.w[i];
    T mom = has_mom ? a.s[0][i] : T(0);
    // MXNet's order of the products, so that the results match it bit for bit.
    if (s.clipping)
      mom = mo * mom - s.lr * s.wd * wi - s.lr * clip(s.rs * a.g[i], s.c);
    else
      mom = mo * mom - s.lr * s.wd * wi - s.lr * s.rs * a.g[i];
    if (has_mom) a.s[0][i] = mom;
    a.w[i] = wi + mom;
  }
};

// --- NAG with momentum, and without (MXNet's sgd_update) -------------------
// Two functors rather than a flag: the CPU loop of each vectorizes.
template <typename T>
struct NAGStep;
struct NAGArgs {
  StepScalars s;
  double momentum;
  template <typename T>
  using Step = NAGStep<T>;
};
template <typename T>
struct NAGStep {
  TypedScalars<T> s;
  T mo;
  explicit NAGStep(const NAGArgs& a) : s(a.s), mo(T(a.momentum)) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* mom = a.s[0];
    const T wi = w[i];
    const T gi = s.grad(a.g[i]);
    mom[i] = mo * mom[i];
    w[i] = wi - mom[i] + (mo + T(1)) * (mom[i] - s.lr * (gi + s.wd * wi));
    mom[i] = mom[i] - s.lr * (gi + s.wd * w[i]);  // reads the new weight, as MXNet
  }
};

template <typename T>
struct NAGPlainStep;
struct NAGPlainArgs {
  StepScalars s;
  template <typename T>
  using Step = NAGPlainStep<T>;
};
template <typename T>
struct NAGPlainStep {
  TypedScalars<T> s;
  explicit NAGPlainStep(const NAGPlainArgs& a) : s(a.s) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    if (s.clipping)
      a.w[i] = (T(1) - s.lr * s.wd) * a.w[i] - s.lr * clip(s.rs * a.g[i], s.c);
    else
      a.w[i] = (T(1) - s.lr * s.wd) * a.w[i] - (s.lr * s.rs) * a.g[i];
  }
};

// --- Adam (lr carries the bias correction) -----------------------------------
template <typename T>
struct AdamStep;
struct AdamArgs {
  StepScalars s;
  double beta1, beta2, epsilon;
  template <typename T>
  using Step = AdamStep<T>;
};
template <typename T>
struct AdamStep {
  TypedScalars<T> s;
  T b1, b2, eps;
  explicit AdamStep(const AdamArgs& a)
      : s(a.s), b1(T(a.beta1)), b2(T(a.beta2)), eps(T(a.epsilon)) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* mean = a.s[0];
    T* var = a.s[1];
    // Adam decays before clipping: the weight term is inside the bound.
    T gi = a.g[i] * s.rs + w[i] * s.wd;
    if (s.clipping) gi = clip(gi, s.c);
    mean[i] = b1 * mean[i] + (T(1) - b1) * gi;
    var[i] = b2 * var[i] + (T(1) - b2) * gi * gi;
    w[i] = w[i] - s.lr * mean[i] / (square_root(var[i]) + eps);
  }
};

// --- AdamW (decoupled weight decay) ------------------------------------------
// lr is MXNet's eta (the schedule's rate), alpha the bias correction.
template <typename T>
struct AdamWStep;
struct AdamWArgs {
  StepScalars s;
  double alpha, beta1, beta2, epsilon;
  template <typename T>
  using Step = AdamWStep<T>;
};
template <typename T>
struct AdamWStep {
  TypedScalars<T> s;
  T alpha, b1, b2, eps;
  explicit AdamWStep(const AdamWArgs& a)
      : s(a.s), alpha(T(a.alpha)), b1(T(a.beta1)), b2(T(a.beta2)), eps(T(a.epsilon)) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* mean = a.s[0];
    T* var = a.s[1];
    const T gi = s.grad(a.g[i]);
    mean[i] = b1 * mean[i] + (T(1) - b1) * gi;
    var[i] = b2 * var[i] + (T(1) - b2) * gi * gi;
    w[i] = w[i] - s.lr * (alpha * mean[i] / (square_root(var[i]) + eps) + s.wd * w[i]);
  }
};

// --- RMSProp (plain and centered) --------------------------------------------
template <typename T>
struct RMSPropStep;
struct RMSPropArgs {
  StepScalars s;
  double gamma1, gamma2, epsilon, clip_weights;  // clip_weights < 0: off
  bool centered;
  template <typename T>
  using Step = RMSPropStep<T>;
};
template <typename T>
struct RMSPropStep {
  TypedScalars<T> s;
  T g1, g2, eps, cw;
  bool clipping_weights, centered;
  explicit RMSPropStep(const RMSPropArgs& a)
      : s(a.s),
        g1(T(a.gamma1)),
        g2(T(a.gamma2)),
        eps(T(a.epsilon)),
        cw(T(a.clip_weights)),
        clipping_weights(a.clip_weights >= 0),
        centered(a.centered) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* n = a.s[0];
    // RMSProp, as Adam, decays before clipping.
    T gi = s.rs * a.g[i] + s.wd * w[i];
    if (s.clipping) gi = clip(gi, s.c);
    n[i] = (T(1) - g1) * gi * gi + g1 * n[i];
    T wi;
    if (centered) {
      T* gm = a.s[1];
      T* delta = a.s[2];
      gm[i] = (T(1) - g1) * gi + g1 * gm[i];
      delta[i] = g2 * delta[i] - s.lr * (gi / square_root(n[i] - gm[i] * gm[i] + eps));
      wi = w[i] + delta[i];
    } else {
      wi = w[i] - s.lr * (gi / square_root(n[i] + eps));
    }
    if (clipping_weights) wi = clip(wi, cw);
    w[i] = wi;
  }
};

// --- AdaGrad -----------------------------------------------------------------
template <typename T>
struct AdaGradStep;
struct AdaGradArgs {
  StepScalars s;
  double eps;
  template <typename T>
  using Step = AdaGradStep<T>;
};
template <typename T>
struct AdaGradStep {
  TypedScalars<T> s;
  T eps;
  explicit AdaGradStep(const AdaGradArgs& a) : s(a.s), eps(T(a.eps)) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* history = a.s[0];
    const T gi = s.grad(a.g[i]);
    history[i] = history[i] + gi * gi;
    const T div = gi / square_root(history[i] + eps);
    w[i] = w[i] + (div + w[i] * s.wd) * -s.lr;
  }
};

// One update over every element index: what the CUDA kernel launches and
// the host tests loop over (f(i) for i in [0, n)).
template <typename Step, typename T>
struct UpdateAt {
  Step step;
  UpdateArrays<T> arrays;
  MX_HOST_DEVICE void operator()(int64_t i) const { step(i, arrays); }
};

}  // namespace mx::optim::kernels
