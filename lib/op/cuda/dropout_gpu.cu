// GPU kernels of Dropout: the functors of dropout_kernels.h, one thread per
// mask element to draw it (Philox, seeded per call), one per data element to
// apply it.
#include "op/cuda/nn_elements.cuh"
#include "op/nn/dropout_kernels.h"

namespace mx::op::cuda {

#define MX_NN_ELEMENTS(F)                                                             \
  template void run_elements<F<float>>(int64_t, void*, const char*, const F<float>&); \
  template void run_elements<F<double>>(int64_t, void*, const char*, const F<double>&);
MX_NN_ELEMENTS(DropoutMaskDraw)
MX_NN_ELEMENTS(DropoutMaskOnes)
MX_NN_ELEMENTS(DropoutApply)
#undef MX_NN_ELEMENTS

}  // namespace mx::op::cuda
