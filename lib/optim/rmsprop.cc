// RMSProp, MXNet 1.9.1's rmsprop_update (Tieleman & Hinton) and, with
// centered, rmspropalex_update (Graves 2013):
//   g = clip(rescale_grad * grad + wd * w)
//   n = (1 - gamma1) * g^2 + gamma1 * n
// plain:     w = w - lr * g / sqrt(n + epsilon)
// centered:  gm    = (1 - gamma1) * g + gamma1 * gm
//            delta = gamma2 * delta - lr * g / sqrt(n - gm^2 + epsilon)
//            w     = w + delta
// then, with clip_weights, w = clip(w, clip_weights).
#include <cmath>

#include "optim/fused_update.h"
#include "optim/optimizers.h"

namespace mx::optim {

void RMSPropParams::declare(ParamDecl<RMSPropParams>& d) {
  declare_optimizer_fields(d, 0.001);
  d.field("gamma1", &RMSPropParams::gamma1)
      .set_default(0.9)
      .set_range(0.0, 1.0)
      .describe("decay of the moving average of squared gradients");
  d.field("gamma2", &RMSPropParams::gamma2)
      .set_default(0.9)
      .set_range(0.0, 1.0)
      .describe("momentum factor (centered only)");
  d.field("epsilon", &RMSPropParams::epsilon)
      .set_default(1e-8)
      .set_lower_bound(0.0)
      .describe("added under the square root for stability");
  d.field("centered", &RMSPropParams::centered)
      .set_default(false)
      .describe("Graves's centered version (keeps the mean gradient and a momentum)");
  d.field("clip_weights", &RMSPropParams::clip_weights)
      .set_default(std::nullopt)
      .describe("clip weights to [-clip_weights, clip_weights]; None or <= 0: no clipping");
}

RMSProp::RMSProp(const RMSPropParams& p) : Optimizer("rmsprop", p), p_(p) {}

std::vector<std::string> RMSProp::state_names() const {
  if (p_.centered) return {"n", "g", "delta"};
  return {"n"};
}

void RMSProp::push_update(const NDArray& weight, const NDArray& grad,
                          const std::vector<NDArray>& state, const Step& step) const {
  const double clip_w = p_.clip_weights && *p_.clip_weights > 0 ? *p_.clip_weights : -1.0;
  const kernels::RMSPropArgs args{scalars(step), p_.gamma1, p_.gamma2,
                                  p_.epsilon,    clip_w,    p_.centered};
  detail::push_fused_update(name(), weight, grad, state, args);
}

}  // namespace mx::optim
