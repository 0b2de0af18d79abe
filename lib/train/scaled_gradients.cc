#include "train/scaled_gradients.h"

#include <cmath>

#include "base/param_value.h"
#include "op/invoke.h"
#include "train/loss_scale_graph.h"

namespace mx::train {
namespace {

op::AttrMap scalar(double value) { return {{"scalar", param_value::print_double(value)}}; }

// 0 when every value of `grad` is finite, else NaN: 0 * x is 0 for a finite
// x and NaN for an infinite or NaN one, and a sum of zeros cannot overflow
// (a plain sum of the gradient could, from finite values).
NDArray finite_probe(const NDArray& grad) {
  return op::invoke("sum", {op::invoke("_mul_scalar", {grad}, scalar(0.0))[0]})[0];
}

}  // namespace

bool unscale_gradients(const std::vector<Executor*>& executors,
                       const std::vector<std::string>& params, double scale, bool check) {
  const double inverse = 1.0 / static_cast<double>(static_cast<float>(scale));
  const op::OpInstance unscale("_mul_scalar", scalar(inverse));
  std::vector<NDArray> probes;
  for (Executor* e : executors) {
    std::vector<NDArray> sums;
    for (const auto& name : params) {
      const NDArray& grad = e->grad_dict().at(name);
      if (inverse != 1.0)
        op::invoke_forward(unscale, {grad}, {}, {grad}, {op::OpReq::kInplace}, false);
      if (check) sums.push_back(finite_probe(grad));
    }
    if (sums.empty()) continue;
    const NDArray total =
        sums.size() == 1
            ? sums[0]
            : op::invoke("add_n", sums, {{"num_args", std::to_string(sums.size())}})[0];
    probes.push_back(total.copy_to(Context::cpu()));
  }
  bool finite = true;
  for (const NDArray& p : probes)  // to_vector waits for the device's backward pass
    finite = finite && std::isfinite(p.to_vector<float>()[0]);
  return finite;
}

void set_loss_scale_inputs(const std::vector<Executor*>& executors, double scale) {
  const NDArray value = NDArray::full(Shape{1}, static_cast<float>(scale), Context::cpu());
  for (Executor* e : executors) {
    NDArray input = e->arg_dict().at(kLossScaleInput);
    value.copy_to(input);
  }
}

}  // namespace mx::train
