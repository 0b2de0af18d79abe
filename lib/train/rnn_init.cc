#include "train/rnn_init.h"

#include "base/strings.h"
#include "graph/node.h"
#include "op/nn/rnn_param.h"

namespace mx::train {
namespace {

void fill_weights(const std::string& name, const NDArray& flat, const op::RnnParam& p,
                  const op::RnnGeometry& g, const optim::Initializer& init) {
  auto matrix = [&](int64_t offset, int64_t rows, int64_t cols, const std::string& what) {
    init.init_weight(name + "_" + what + "_weight",
                     flat.slice(offset, offset + rows * cols).reshape(Shape{rows, cols}));
  };
  const char* dirs[] = {"l", "r"};
  for (int64_t l = 0; l < g.L; ++l)
    for (int64_t d = 0; d < g.D; ++d) {
      const std::string cell = str(dirs[d], l);
      matrix(g.wx(l, d), g.G * g.H, g.layer_input(l), cell + "_i2h");
      matrix(g.wh(l, d), g.G * g.H, g.P, cell + "_h2h");
      if (g.projection) matrix(g.whr(l, d), g.P, g.H, cell + "_h2r");
    }
  NDArray biases = flat.slice(g.weight_count(), g.parameter_count());
  biases.fill(0.0);
  if (!p.lstm()) return;
  for (int64_t l = 0; l < g.L; ++l)
    for (int64_t d = 0; d < g.D; ++d) {
      NDArray forget = flat.slice(g.bx(l, d) + g.H, g.bx(l, d) + 2 * g.H);
      forget.fill(1.0);
    }
}

}  // namespace

std::vector<std::string> initialize_rnn_parameters(const graph::Symbol& network,
                                                   const Executor& exe,
                                                   const optim::Initializer& init) {
  std::vector<std::string> done;
  for (const auto& node : graph::topo_order(network.outputs())) {
    if (node->is_variable() || node->op->def().name != "RNN" || node->inputs.size() < 2) continue;
    const auto& source = node->inputs[1].node;
    if (!source->is_variable() || !exe.arg_dict().count(source->name)) continue;
    const auto& p = *static_cast<const op::RnnParam*>(node->op->params().get());
    const NDArray& flat = exe.arg_dict().at(source->name);
    // The input size follows from the vector's length, which is linear in it.
    const int64_t per_input = p.directions() * p.gates() * p.state_size;
    const int64_t input_size = (flat.size() - p.parameter_count(0)) / per_input;
    fill_weights(source->name, flat, p, op::RnnGeometry(p, 1, 1, input_size), init);
    done.push_back(source->name);
  }
  return done;
}

}  // namespace mx::train
