// GPU kernels of Activation and LeakyReLU: the element-wise functors of
// activation_kernels.h and leaky_relu_kernels.h, one thread per element (the
// prelu gamma gradient: one thread per channel, as the CPU sums it).
#include "op/cuda/launch.cuh"
#include "op/cuda/nn_elements.cuh"
#include "op/nn/activation_kernels.h"
#include "op/nn/leaky_relu_kernels.h"

namespace mx::op::cuda {

#define MX_NN_ELEMENTS(F)                                                             \
  template void run_elements<F<float>>(int64_t, void*, const char*, const F<float>&); \
  template void run_elements<F<double>>(int64_t, void*, const char*, const F<double>&);
MX_NN_ELEMENTS(ActivationForward)
MX_NN_ELEMENTS(ActivationBackward)
MX_NN_ELEMENTS(LeakyForward)
MX_NN_ELEMENTS(LeakyBackward)
MX_NN_ELEMENTS(PreluForward)
MX_NN_ELEMENTS(PreluBackwardData)
MX_NN_ELEMENTS(PreluGammaGrad)
#undef MX_NN_ELEMENTS

}  // namespace mx::op::cuda
