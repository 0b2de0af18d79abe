#include "train/scaled_gradients.h"

#include "base/param_value.h"
#include "op/invoke.h"
#include "train/loss_scale_graph.h"

namespace mx::train {

bool gradients_finite(const std::vector<Executor*>& executors,
                      const std::vector<std::string>& params) {
  if (params.empty()) return true;
  const op::OpInstance check("multi_all_finite", {{"num_arrays", std::to_string(params.size())}});
  std::vector<NDArray> flags;
  for (Executor* e : executors) {
    std::vector<NDArray> grads;
    for (const auto& name : params) grads.push_back(e->grad_dict().at(name));
    flags.push_back(op::invoke(check, grads)[0].copy_to(Context::cpu()));
  }
  bool finite = true;
  for (const NDArray& f : flags)  // to_vector waits for the device's backward pass
    finite = finite && f.to_vector<float>()[0] == 1.0f;
  return finite;
}

void divide_gradients(const std::vector<Executor*>& executors,
                      const std::vector<std::string>& params, double scale) {
  const double inverse = 1.0 / scale;
  if (inverse == 1.0) return;
  const op::OpInstance unscale("_mul_scalar", {{"scalar", param_value::print_double(inverse)}});
  for (Executor* e : executors)
    for (const auto& name : params) {
      const NDArray& grad = e->grad_dict().at(name);
      op::invoke_forward(unscale, {grad}, {}, {grad}, {op::OpReq::kInplace}, false);
    }
}

void set_loss_scale_inputs(const std::vector<Executor*>& executors, double scale) {
  const NDArray value = NDArray::full(Shape{1}, static_cast<float>(scale), Context::cpu());
  for (Executor* e : executors) {
    NDArray input = e->arg_dict().at(kLossScaleInput);
    value.copy_to(input);
  }
}

}  // namespace mx::train
