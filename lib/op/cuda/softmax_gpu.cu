// GPU kernels of softmax, log_softmax, SoftmaxOutput and the regression
// outputs: the functors of softmax_kernels.h (one thread per vector, the
// CPU kernel's arithmetic) and output_kernels.h (one thread per element;
// the valid-label count of SoftmaxOutput by one block).
#include "op/cuda/block_sum.cuh"
#include "op/cuda/nn_elements.cuh"
#include "op/nn/output_kernels.h"
#include "op/nn/softmax_kernels.h"

namespace mx::op::cuda {
namespace {

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    count_valid_labels_kernel(ValidLabelCount<T> f, int64_t* count) {
  __shared__ double shared[kBlockThreads];
  // Counts up to 2^53 are exact in a double.
  const double sum = block_sum(static_cast<double>(f.partial(threadIdx.x, blockDim.x)), shared);
  if (threadIdx.x == 0) *count = static_cast<int64_t>(sum);
}

}  // namespace

template <typename T>
void count_valid_labels(const ValidLabelCount<T>& f, int64_t* count, void* stream) {
  count_valid_labels_kernel<T><<<1, kBlockThreads, 0, stream_of(stream)>>>(f, count);
  check_launch("count_valid_labels_kernel", "SoftmaxOutput");
}

void fill_zero(const TensorRef& t, void* stream, const char* where) {
  if (t.size() == 0) return;
  MX_CUDA_CHECK(cudaMemsetAsync(t.data, 0, static_cast<size_t>(t.size()) * dtype_size(t.dtype),
                                stream_of(stream)),
                where);
}

template void count_valid_labels<float>(const ValidLabelCount<float>&, int64_t*, void*);
template void count_valid_labels<double>(const ValidLabelCount<double>&, int64_t*, void*);

#define MX_NN_ELEMENTS(...) \
  template void run_elements<__VA_ARGS__>(int64_t, void*, const char*, const __VA_ARGS__&);
MX_NN_ELEMENTS(SoftmaxRowForward<float, float>)
MX_NN_ELEMENTS(SoftmaxRowForward<float, double>)
MX_NN_ELEMENTS(SoftmaxRowForward<double, float>)
MX_NN_ELEMENTS(SoftmaxRowForward<double, double>)
MX_NN_ELEMENTS(SoftmaxRowBackward<float, float>)
MX_NN_ELEMENTS(SoftmaxRowBackward<float, double>)
MX_NN_ELEMENTS(SoftmaxRowBackward<double, float>)
MX_NN_ELEMENTS(SoftmaxRowBackward<double, double>)
MX_NN_ELEMENTS(SoftmaxOutputProbGrad<float>)
MX_NN_ELEMENTS(SoftmaxOutputProbGrad<double>)
MX_NN_ELEMENTS(SoftmaxOutputGrad<float>)
MX_NN_ELEMENTS(SoftmaxOutputGrad<double>)
MX_NN_ELEMENTS(RegressionForward<float>)
MX_NN_ELEMENTS(RegressionForward<double>)
MX_NN_ELEMENTS(RegressionBackward<float>)
MX_NN_ELEMENTS(RegressionBackward<double>)
#undef MX_NN_ELEMENTS

}  // namespace mx::op::cuda
