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
  if (state.empty())
    detail::push_fused_update(name(), weight, grad, state, kernels::NAGPlainArgs{scalars(step)});
  else
    detail::push_fused_update(name(), weight, grad, state,
                              kernels::NAGArgs{scalars(step), p_.momentum});
}

}  // namespace mx::optim
