// Adam, MXNet 1.9.1's Adam optimizer and adam_update operator. The bias
// correction goes into the learning rate (t = this parameter's update count):
//   lr_t = lr * sqrt(1 - beta2^t) / (1 - beta1^t)
//   g    = clip(rescale_grad * grad + wd * w)      (weight decay before clipping)
//   mean = beta1 * mean + (1 - beta1) * g
//   var  = beta2 * var + (1 - beta2) * g^2
//   w    = w - lr_t * mean / (sqrt(var) + epsilon)
#include <cmath>

#include "base/error.h"
#include "optim/fused_update.h"
#include "optim/optimizers.h"

namespace mx::optim {

void AdamParams::declare(ParamDecl<AdamParams>& d) {
  declare_optimizer_fields(d, 0.001);
  d.field("beta1", &AdamParams::beta1)
      .set_default(0.9)
      .set_range(0.0, 1.0)
      .describe("decay rate of the first moment estimate, < 1");
  d.field("beta2", &AdamParams::beta2)
      .set_default(0.999)
      .set_range(0.0, 1.0)
      .describe("decay rate of the second moment estimate, < 1");
  d.field("epsilon", &AdamParams::epsilon)
      .set_default(1e-8)
      .set_lower_bound(0.0)
      .describe("added to the denominator for stability");
  d.field("lazy_update", &AdamParams::lazy_update)
      .set_default(true)
      .describe("MXNet's sparse lazy update; gradients here are dense, so it has no effect");
}

Adam::Adam(const AdamParams& p) : Optimizer("adam", p), p_(p) {
  if (p_.beta1 >= 1.0 || p_.beta2 >= 1.0)
    throw InputError("optimizer 'adam': beta1 and beta2 must be below 1");
}

void Adam::push_update(const NDArray& weight, const NDArray& grad,
                       const std::vector<NDArray>& state, const Step& step) const {
  const double t = static_cast<double>(step.t);
  const double coef1 = 1.0 - std::pow(p_.beta1, t), coef2 = 1.0 - std::pow(p_.beta2, t);
  kernels::AdamArgs args{scalars(step), p_.beta1, p_.beta2, p_.epsilon};
  args.s.lr *= std::sqrt(coef2) / coef1;  // the bias correction
  detail::push_fused_update(name(), weight, grad, state, args);
}

}  // namespace mx::optim
