// The backward of operators whose inputs get a zero gradient whatever the
// output's: MXNet declares them with MakeZeroGradNodes (the comparison and
// logical operators, BlockGrad, zeros_like, ones_like). Their backward reads
// nothing of the forward pass.
#pragma once

#include "op/op_def.h"

namespace mx::op {

// 0 into each input gradient requested with write or inplace; add keeps the
// buffer as it is (adding zero) and null leaves it alone. On the CPU, or on
// the GPU with the call's stream.
void write_zero_gradients(const BackwardCall& c, DeviceKind device, const char* op);

// Declares that backward on the CPU and, in a CUDA build, on the GPU.
template <typename P>
OpBuilder<P>& zero_gradient(OpBuilder<P>& b, const char* op) {
  b.backward_uses(false, false).backward_cpu([op](const P&, const BackwardCall& c) {
    write_zero_gradients(c, DeviceKind::kCPU, op);
  });
#if MX_USE_CUDA
  b.backward(DeviceKind::kGPU, [op](const P&, const BackwardCall& c) {
    write_zero_gradients(c, DeviceKind::kGPU, op);
  });
#endif
  return b;
}

}  // namespace mx::op
