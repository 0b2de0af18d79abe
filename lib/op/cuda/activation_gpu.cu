// GPU kernels of Activation and LeakyReLU: the element-wise functors of
// activation_kernels.h and leaky_relu_kernels.h, one thread per element (the
// prelu gamma gradient: one block per output).
#include "op/cuda/block_sum.cuh"
#include "op/cuda/nn_elements.cuh"
#include "op/nn/activation_kernels.h"
#include "op/nn/leaky_relu_kernels.h"

namespace mx::op::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kBlockThreads) prelu_gamma_grad_kernel(PreluGammaGrad<T> f) {
  __shared__ double shared[kBlockThreads];
  const int64_t k = blockIdx.x;
  const double sum = block_sum(f.partial(k, threadIdx.x, blockDim.x), shared);
  if (threadIdx.x == 0) f.store(k, sum);
}

}  // namespace

template <typename T>
void prelu_gamma_grad(const PreluGammaGrad<T>& f, void* stream) {
  if (f.size() <= 0) return;
  prelu_gamma_grad_kernel<T>
      <<<static_cast<unsigned>(f.size()), kBlockThreads, 0, stream_of(stream)>>>(f);
  check_launch("prelu_gamma_grad_kernel", "LeakyReLU");
}

template void prelu_gamma_grad<float>(const PreluGammaGrad<float>&, void*);
template void prelu_gamma_grad<double>(const PreluGammaGrad<double>&, void*);

#define MX_NN_ELEMENTS(F)                                                             \
  template void run_elements<F<float>>(int64_t, void*, const char*, const F<float>&); \
  template void run_elements<F<double>>(int64_t, void*, const char*, const F<double>&);
MX_NN_ELEMENTS(ActivationForward)
MX_NN_ELEMENTS(ActivationBackward)
// Activation runs in mixed precision too (its AMP class follows its input).
#define MX_NN_ELEMENTS_16(F)                                                            \
  template void run_elements<F<half_t>>(int64_t, void*, const char*, const F<half_t>&); \
  template void run_elements<F<bf16_t>>(int64_t, void*, const char*, const F<bf16_t>&);
MX_NN_ELEMENTS_16(ActivationForward)
MX_NN_ELEMENTS_16(ActivationBackward)
#undef MX_NN_ELEMENTS_16
MX_NN_ELEMENTS(LeakyForward)
MX_NN_ELEMENTS(LeakyBackward)
MX_NN_ELEMENTS(PreluForward)
MX_NN_ELEMENTS(PreluBackwardData)
#undef MX_NN_ELEMENTS

}  // namespace mx::op::cuda
