// Where train.loss_scale enters the backward pass. mx's loss operators
// (SoftmaxOutput, LinearRegressionOutput, LogisticRegressionOutput,
// MAERegressionOutput) compute their own gradient and take no head gradient,
// and their grad_scale is fixed when the graph is bound, so the scale cannot
// come in as a head gradient or as a parameter that changes while training.
// Instead the bound training graph passes each loss operator's data input x
// (and each output that is not a loss) through
//     y = BlockGrad(x) + s * (x - BlockGrad(x))
// with s the one-element input kLossScaleInput: in the forward pass
// x - x = 0 exactly, so y is x bit for bit (and cannot overflow whatever
// s is); in the backward pass the gradient reaching x is s times the loss
// operator's (one float32 product, exact for a power of two). The loss's
// gradient and everything behind it then run scaled, in float32 where the
// AMP pass put the loss and in the low precision behind its amp_cast. The
// checkpoint's symbol is the network without it.
#pragma once

#include "graph/symbol.h"

namespace mx::train {

// The argument that holds the scale: float32, shape (1,), no gradient.
inline constexpr const char* kLossScaleInput = "__loss_scale__";

// `network` (as bound: after the AMP pass) with the scaled gradient path in
// front of every loss operator and behind every other output. The network
// itself is not changed (its loss nodes are copied).
graph::Symbol scale_loss_gradient(const graph::Symbol& network);

}  // namespace mx::train
