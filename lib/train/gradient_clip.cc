#include "train/gradient_clip.h"

#include "base/param_value.h"
#include "op/invoke.h"

namespace mx::train {
namespace {

NDArray unary(const std::string& op, const NDArray& x, const op::AttrMap& attrs = {}) {
  return op::invoke(op, {x}, attrs)[0];
}

op::AttrMap scalar(double value) { return {{"scalar", param_value::print_double(value)}}; }

// The devices' gradients of one parameter summed on the first one's device.
NDArray device_sum(const std::vector<Executor*>& executors, const std::string& name) {
  const NDArray first = executors[0]->grad_dict().at(name);
  if (executors.size() == 1) return first;
  std::vector<NDArray> all{first};
  for (size_t k = 1; k < executors.size(); ++k)
    all.push_back(executors[k]->grad_dict().at(name).copy_to(first.ctx()));
  return op::invoke("add_n", all, {{"num_args", std::to_string(all.size())}})[0];
}

}  // namespace

void clip_global_norm(const std::vector<Executor*>& executors,
                      const std::vector<std::string>& params, double max_norm, double rescale) {
  if (executors.empty() || params.empty()) return;
  std::vector<NDArray> squares;
  for (const auto& name : params)
    squares.push_back(unary("sum", unary("square", device_sum(executors, name))));
  const NDArray total =
      squares.size() == 1
          ? squares[0]
          : op::invoke("add_n", squares, {{"num_args", std::to_string(squares.size())}})[0];
  // max_norm / (rescale * norm), at most 1 (a zero norm gives infinity, then 1).
  const NDArray norm = unary("_mul_scalar", unary("sqrt", total), scalar(rescale));
  const NDArray factor =
      unary("_minimum_scalar", unary("_rdiv_scalar", norm, scalar(max_norm)), scalar(1.0));
  for (Executor* e : executors) {
    const Context ctx = e->grad_dict().at(params[0]).ctx();
    const NDArray f = factor.ctx() == ctx ? factor : factor.copy_to(ctx);
    for (const auto& name : params) {
      NDArray grad = e->grad_dict().at(name);
      op::invoke("broadcast_mul", {grad, f})[0].copy_to(grad);
    }
  }
}

}  // namespace mx::train
