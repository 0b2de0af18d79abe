// SGD with momentum and weight decay, as MXNet 1.9.1 runs it for dense
// arrays (multi_sgd_update / multi_sgd_mom_update, which SGD.update always
// uses for them):
//   mom = momentum * mom - lr * wd * w - lr * clip(rescale_grad * grad)
//   w   = w + mom
// The momentum state holds the negative of the docstring's "state", as in
// MXNet, so saved states mean the same in both.
#include "optim/fused_update.h"
#include "optim/optimizers.h"

namespace mx::optim {

void SGDParams::declare(ParamDecl<SGDParams>& d) {
  declare_optimizer_fields(d, 0.01);
  d.field("momentum", &SGDParams::momentum)
      .set_default(0.0)
      .set_range(0.0, 1.0)
      .describe("momentum factor; 0 keeps no momentum state");
  d.field("lazy_update", &SGDParams::lazy_update)
      .set_default(true)
      .describe("MXNet's sparse lazy update; gradients here are dense, so it has no effect");
}

SGD::SGD(const SGDParams& p) : Optimizer("sgd", p), p_(p) {}

std::vector<std::string> SGD::state_names() const {
  if (p_.momentum == 0.0) return {};
  return {"mom"};
}

void SGD::push_update(const NDArray& weight, const NDArray& grad, const std::vector<NDArray>& state,
                      const Step& step) const {
  const kernels::SGDArgs args{scalars(step), p_.momentum, !state.empty()};
  detail::push_fused_update(name(), weight, grad, state, args);
}

}  // namespace mx::optim
