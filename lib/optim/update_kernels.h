// The per-element step of every optimizer update, as MX_HOST_DEVICE functors
// that both the CPU loop (fused_update.h) and the CUDA kernel
// (update_gpu.cu) run, so the optimizer tests check the arithmetic the GPU
// runs. The formulas and their MXNet origins are in each optimizer's .cc.
//
// Each optimizer has an Args struct of host doubles (what push_update
// computes from the step) whose Step<T> is the typed functor: built once per
// update on the host, then copied by value into the kernel.
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

// --- SGD (momentum optional) -------------------------------------------------
template <typename T>
struct SGDStep;
struct SGDArgs {
  double lr, wd, rescale, clip, momentum;  // clip < 0: no clipping
  bool has_mom;
  template <typename T>
  using Step = SGDStep<T>;
};
template <typename T>
struct SGDStep {
  T lr, wd, rs, c, mo;
  bool clipping, has_mom;
  explicit SGDStep(const SGDArgs& a)
      : lr(T(a.lr)),
        wd(T(a.wd)),
        rs(T(a.rescale)),
        c(T(a.clip)),
        mo(T(a.momentum)),
        clipping(a.clip >= 0),
        has_mom(a.has_mom) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    const T wi = a.w[i];
    T mom = has_mom ? a.s[0][i] : T(0);
    if (clipping)
      mom = mo * mom - lr * wd * wi - lr * clip(rs * a.g[i], c);
    else
      mom = mo * mom - lr * wd * wi - lr * rs * a.g[i];
    if (has_mom) a.s[0][i] = mom;
    a.w[i] = wi + mom;
  }
};

// --- NAG with momentum, and without (MXNet's sgd_update) -------------------
// Two functors rather than a flag: the CPU loop of each vectorizes.
template <typename T>
struct NAGStep;
struct NAGArgs {
  double lr, wd, rescale, clip, momentum;
  template <typename T>
  using Step = NAGStep<T>;
};
template <typename T>
struct NAGStep {
  T lr, wd, rs, c, mo;
  bool clipping;
  explicit NAGStep(const NAGArgs& a)
      : lr(T(a.lr)),
        wd(T(a.wd)),
        rs(T(a.rescale)),
        c(T(a.clip)),
        mo(T(a.momentum)),
        clipping(a.clip >= 0) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* mom = a.s[0];
    const T wi = w[i];
    const T gi = clipping ? clip(rs * a.g[i], c) : rs * a.g[i];
    mom[i] = mo * mom[i];
    w[i] = wi - mom[i] + (mo + T(1)) * (mom[i] - lr * (gi + wd * wi));
    mom[i] = mom[i] - lr * (gi + wd * w[i]);  // reads the new weight, as MXNet
  }
};

template <typename T>
struct NAGPlainStep;
struct NAGPlainArgs {
  double lr, wd, rescale, clip;
  template <typename T>
  using Step = NAGPlainStep<T>;
};
template <typename T>
struct NAGPlainStep {
  T lr, wd, rs, c;
  bool clipping;
  explicit NAGPlainStep(const NAGPlainArgs& a)
      : lr(T(a.lr)), wd(T(a.wd)), rs(T(a.rescale)), c(T(a.clip)), clipping(a.clip >= 0) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    if (clipping)
      w[i] = (T(1) - lr * wd) * w[i] - lr * clip(rs * a.g[i], c);
    else
      w[i] = (T(1) - lr * wd) * w[i] - (lr * rs) * a.g[i];
  }
};

// --- Adam (lr carries the bias correction) -----------------------------------
template <typename T>
struct AdamStep;
struct AdamArgs {
  double lr, wd, rescale, clip, beta1, beta2, epsilon;
  template <typename T>
  using Step = AdamStep<T>;
};
template <typename T>
struct AdamStep {
  T lr, wd, rs, c, b1, b2, eps;
  bool clipping;
  explicit AdamStep(const AdamArgs& a)
      : lr(T(a.lr)),
        wd(T(a.wd)),
        rs(T(a.rescale)),
        c(T(a.clip)),
        b1(T(a.beta1)),
        b2(T(a.beta2)),
        eps(T(a.epsilon)),
        clipping(a.clip >= 0) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* mean = a.s[0];
    T* var = a.s[1];
    T gi = a.g[i] * rs + w[i] * wd;
    if (clipping) gi = clip(gi, c);
    mean[i] = b1 * mean[i] + (T(1) - b1) * gi;
    var[i] = b2 * var[i] + (T(1) - b2) * gi * gi;
    w[i] = w[i] - lr * mean[i] / (square_root(var[i]) + eps);
  }
};

// --- AdamW (decoupled weight decay) ------------------------------------------
template <typename T>
struct AdamWStep;
struct AdamWArgs {
  double eta, alpha, wd, rescale, clip, beta1, beta2, epsilon;
  template <typename T>
  using Step = AdamWStep<T>;
};
template <typename T>
struct AdamWStep {
  T eta, alpha, wd, rs, c, b1, b2, eps;
  bool clipping;
  explicit AdamWStep(const AdamWArgs& a)
      : eta(T(a.eta)),
        alpha(T(a.alpha)),
        wd(T(a.wd)),
        rs(T(a.rescale)),
        c(T(a.clip)),
        b1(T(a.beta1)),
        b2(T(a.beta2)),
        eps(T(a.epsilon)),
        clipping(a.clip >= 0) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* mean = a.s[0];
    T* var = a.s[1];
    T gi = a.g[i] * rs;
    if (clipping) gi = clip(gi, c);
    mean[i] = b1 * mean[i] + (T(1) - b1) * gi;
    var[i] = b2 * var[i] + (T(1) - b2) * gi * gi;
    w[i] = w[i] - eta * (alpha * mean[i] / (square_root(var[i]) + eps) + wd * w[i]);
  }
};

// --- RMSProp (plain and centered) --------------------------------------------
template <typename T>
struct RMSPropStep;
struct RMSPropArgs {
  double lr, wd, rescale, clip, gamma1, gamma2, epsilon, clip_weights;  // clip_weights < 0: off
  bool centered;
  template <typename T>
  using Step = RMSPropStep<T>;
};
template <typename T>
struct RMSPropStep {
  T lr, wd, rs, c, g1, g2, eps, cw;
  bool clipping, clipping_weights, centered;
  explicit RMSPropStep(const RMSPropArgs& a)
      : lr(T(a.lr)),
        wd(T(a.wd)),
        rs(T(a.rescale)),
        c(T(a.clip)),
        g1(T(a.gamma1)),
        g2(T(a.gamma2)),
        eps(T(a.epsilon)),
        cw(T(a.clip_weights)),
        clipping(a.clip >= 0),
        clipping_weights(a.clip_weights >= 0),
        centered(a.centered) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* n = a.s[0];
    T gi = rs * a.g[i] + wd * w[i];
    if (clipping) gi = clip(gi, c);
    n[i] = (T(1) - g1) * gi * gi + g1 * n[i];
    T wi;
    if (centered) {
      T* gm = a.s[1];
      T* delta = a.s[2];
      gm[i] = (T(1) - g1) * gi + g1 * gm[i];
      delta[i] = g2 * delta[i] - lr * (gi / square_root(n[i] - gm[i] * gm[i] + eps));
      wi = w[i] + delta[i];
    } else {
      wi = w[i] - lr * (gi / square_root(n[i] + eps));
    }
    if (clipping_weights) wi = clip(wi, cw);
    w[i] = wi;
  }
};

// --- AdaGrad -----------------------------------------------------------------
template <typename T>
struct AdaGradStep;
struct AdaGradArgs {
  double lr, wd, rescale, clip, eps;
  template <typename T>
  using Step = AdaGradStep<T>;
};
template <typename T>
struct AdaGradStep {
  T lr, wd, rs, c, eps;
  bool clipping;
  explicit AdaGradStep(const AdaGradArgs& a)
      : lr(T(a.lr)),
        wd(T(a.wd)),
        rs(T(a.rescale)),
        c(T(a.clip)),
        eps(T(a.eps)),
        clipping(a.clip >= 0) {}
  MX_HOST_DEVICE void operator()(int64_t i, const UpdateArrays<T>& a) const {
    T* w = a.w;
    T* history = a.s[0];
    T gi = a.g[i] * rs;
    if (clipping) gi = clip(gi, c);
    history[i] = history[i] + gi * gi;
    const T div = gi / square_root(history[i] + eps);
    w[i] = w[i] + (div + w[i] * wd) * -lr;
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
