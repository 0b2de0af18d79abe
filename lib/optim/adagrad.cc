// AdaGrad, MXNet 1.9.1's dense AdaGrad.update (NDArray operations fused here):
//   g       = clip(rescale_grad * grad)
//   history = history + g^2
//   w       = w + (g / sqrt(history + eps) + w * wd) * -lr
// MXNet's parameter is called eps (not epsilon). One difference: MXNet clips
// here whenever clip_gradient is not None, even when it is 0; like MXNet's
// other optimizers, values <= 0 mean no clipping.
#include <cmath>

#include "optim/fused_update.h"
#include "optim/optimizers.h"

namespace mx::optim {

void AdaGradParams::declare(ParamDecl<AdaGradParams>& d) {
  declare_optimizer_fields(d, 0.01);
  d.field("eps", &AdaGradParams::eps)
      .set_default(1e-7)
      .set_lower_bound(0.0)
      .describe("added under the square root for stability");
}

AdaGrad::AdaGrad(const AdaGradParams& p) : Optimizer("adagrad", p), p_(p) {}

void AdaGrad::push_update(const NDArray& weight, const NDArray& grad,
                          const std::vector<NDArray>& state, const Step& step) const {
  const kernels::AdaGradArgs args{scalars(step), p_.eps};
  detail::push_fused_update(name(), weight, grad, state, args);
}

}  // namespace mx::optim
