// Nesterov accelerated gradient, MXNet 1.9.1's nag_mom_update:
//   g'  = clip(rescale_grad * grad) + wd * w
//   mom = momentum * mom
//   w   = w - mom + (momentum + 1) * (mom - lr * g')
//   mom = mom - lr * (clip(rescale_grad * grad) + wd * w_new)
// The last line reads the weight already updated: MXNet's optimizer runs the
// kernel in place (out=weight), so the kernel's second read of the weight
// sees the new value; the fixtures confirm it.
// Without momentum MXNet's NAG calls sgd_update:
//   w = (1 - lr * wd) * w - lr * clip(rescale_grad * grad)
#include "optim/fused_update.h"
#include "optim/optimizers.h"

namespace mx::optim {

void NAGParams::declare(ParamDecl<NAGParams>& d) {
  declare_optimizer_fields(d, 0.01);
  d.field("momentum", &NAGParams::momentum)
      .set_default(0.0)
      .set_range(0.0, 1.0)
      .describe("momentum factor; 0 makes this plain SGD");
}

NAG::NAG(const NAGParams& p) : Optimizer("nag", p), p_(p) {}

std::vector<std::string> NAG::state_names() const {
  if (p_.momentum == 0.0) return {};
  return {"mom"};
}

void NAG::push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                      const Step& step) const {
  const double lr = step.lr, wd = step.wd, rescale = fields().rescale_grad, clip = clip_bound(),
               momentum = p_.momentum;
  if (state.empty()) {
    detail::push_fused_update(
        name(), weight, grad, state,
        [=](auto* w, const auto* g, auto* const*, int64_t begin, int64_t end) {
          using T = std::remove_cvref_t<decltype(*w)>;
          const T lr_ = T(lr), wd_ = T(wd), rs = T(rescale), c = T(clip);
          for (int64_t i = begin; i < end; ++i) {
            if (clip >= 0)
              w[i] = (T(1) - lr_ * wd_) * w[i] - lr_ * detail::clip(rs * g[i], c);
            else
              w[i] = (T(1) - lr_ * wd_) * w[i] - (lr_ * rs) * g[i];
          }
        });
    return;
  }
  detail::push_fused_update(
      name(), weight, grad, state,
      [=](auto* w, const auto* g, auto* const* s, int64_t begin, int64_t end) {
        using T = std::remove_cvref_t<decltype(*w)>;
        const T lr_ = T(lr), wd_ = T(wd), rs = T(rescale), c = T(clip), mo = T(momentum);
        T* mom = s[0];
        for (int64_t i = begin; i < end; ++i) {
          const T wi = w[i];
          const T gi = clip >= 0 ? detail::clip(rs * g[i], c) : rs * g[i];
          mom[i] = mo * mom[i];
          w[i] = wi - mom[i] + (mo + T(1)) * (mom[i] - lr_ * (gi + wd_ * wi));
          mom[i] = mom[i] - lr_ * (gi + wd_ * w[i]);
        }
      });
}

}  // namespace mx::optim
