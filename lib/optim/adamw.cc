// AdamW (decoupled weight decay, Loshchilov & Hutter) on MXNet 1.9.1's
// contrib adamw_update operator, which computes
//   g    = clip(rescale_grad * grad)               (no weight decay in g)
//   mean = beta1 * mean + (1 - beta1) * g
//   var  = beta2 * var + (1 - beta2) * g^2
//   w    = w - eta * (alpha * mean / (sqrt(var) + epsilon) + wd * w)
// and skips the update when rescale_grad is 0, NaN or infinite. MXNet 1.9.1
// has no AdamW optimizer class around it; here eta is the scheduled learning
// rate (times lr_mult) and alpha the bias correction that MXNet's Adam puts
// into its rate, sqrt(1 - beta2^t) / (1 - beta1^t) (1 when correct_bias is
// false, as in BERT's Adam). The decay term is thus lr * wd * w, as in
// PyTorch's AdamW.
#include <cmath>

#include "base/error.h"
#include "optim/fused_update.h"
#include "optim/optimizers.h"

namespace mx::optim {

void AdamWParams::declare(ParamDecl<AdamWParams>& d) {
  declare_optimizer_fields(d, 0.001);
  d.field("beta1", &AdamWParams::beta1)
      .set_default(0.9)
      .set_range(0.0, 1.0)
      .describe("decay rate of the first moment estimate, < 1");
  d.field("beta2", &AdamWParams::beta2)
      .set_default(0.999)
      .set_range(0.0, 1.0)
      .describe("decay rate of the second moment estimate, < 1");
  d.field("epsilon", &AdamWParams::epsilon)
      .set_default(1e-8)
      .set_lower_bound(0.0)
      .describe("added to the denominator for stability");
  d.field("correct_bias", &AdamWParams::correct_bias)
      .set_default(true)
      .describe("apply Adam's bias correction (through the step size)");
}

AdamW::AdamW(const AdamWParams& p) : Optimizer("adamw", p), p_(p) {
  if (p_.beta1 >= 1.0 || p_.beta2 >= 1.0)
    throw InputError("optimizer 'adamw': beta1 and beta2 must be below 1");
}

void AdamW::push_update(const NDArray& weight, const NDArray& grad,
                        const std::vector<NDArray>& state, const Step& step) const {
  const double rescale = fields().rescale_grad;
  if (rescale == 0.0 || !std::isfinite(rescale)) return;  // as adamw_update
  const double t = static_cast<double>(step.t);
  const double alpha = p_.correct_bias
                           ? std::sqrt(1.0 - std::pow(p_.beta2, t)) / (1.0 - std::pow(p_.beta1, t))
                           : 1.0;
  const kernels::AdamWArgs args{scalars(step), alpha, p_.beta1, p_.beta2, p_.epsilon};
  detail::push_fused_update(name(), weight, grad, state, args);
}

}  // namespace mx::optim
