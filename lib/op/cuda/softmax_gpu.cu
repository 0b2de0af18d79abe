// GPU kernels of softmax, log_softmax, SoftmaxOutput and the regression
// outputs: the functors of softmax_kernels.h (a block per long contiguous
// row, its threads' parts combined in the block, else a thread per row; the
// CPU kernel's arithmetic) and output_kernels.h (one thread per element;
// the valid-label count of SoftmaxOutput by one block).
#include "op/cuda/block_sum.cuh"
#include "op/cuda/nn_elements.cuh"
#include "op/nn/output_kernels.h"
#include "op/nn/softmax_kernels.h"

namespace mx::op::cuda {
namespace {

// Threads per row for a block per row, 0 for a thread per row.
int row_threads(const SoftmaxLayout& l) {
  if (l.inner != 1 || l.size < 64 || l.outer > 0x7fffffffLL) return 0;
  return l.size >= 2048 ? kBlockThreads : l.size >= 256 ? 128 : 32;
}

template <typename TI, typename TO>
__global__ void __launch_bounds__(kBlockThreads)
    softmax_rows_forward_kernel(SoftmaxRowForward<TI, TO> f) {
  __shared__ double shared[kBlockThreads];
  const int64_t row = blockIdx.x;
  const double top = block_combine(f.partial_max(row, threadIdx.x, blockDim.x), shared,
                                   [](double a, double b) { return softmax_max(a, b); });
  const double sum = block_sum(f.partial_sum(row, top, threadIdx.x, blockDim.x), shared);
  f.write(row, top, sum, threadIdx.x, blockDim.x);
}

template <typename TI, typename TO>
__global__ void __launch_bounds__(kBlockThreads)
    softmax_rows_backward_kernel(SoftmaxRowBackward<TI, TO> f) {
  __shared__ double shared[kBlockThreads];
  const int64_t row = blockIdx.x;
  f.write(row, block_sum(f.partial_dot(row, threadIdx.x, blockDim.x), shared), threadIdx.x,
          blockDim.x);
}

template <typename T>
__global__ void __launch_bounds__(kBlockThreads)
    count_valid_labels_kernel(ValidLabelCount<T> f, int64_t* count) {
  __shared__ double shared[kBlockThreads];
  // Counts up to 2^53 are exact in a double.
  const double sum = block_sum(static_cast<double>(f.partial(threadIdx.x, blockDim.x)), shared);
  if (threadIdx.x == 0) *count = static_cast<int64_t>(sum);
}

// f's rows: `block_kernel` with a block per row where row_threads says so,
// else a thread per row.
template <typename F>
void run_rows(const F& f, void (*block_kernel)(F), const char* kernel_name, void* stream,
              const char* where) {
  if (f.req == OpReq::kNull || f.rows() <= 0) return;
  if (const int threads = row_threads(f.l)) {
    block_kernel<<<static_cast<unsigned>(f.rows()), threads, 0, stream_of(stream)>>>(f);
    check_launch(kernel_name, where);
  } else {
    launch_elements(f.rows(), stream_of(stream), where, f);
  }
}

}  // namespace

template <typename TI, typename TO>
void softmax_rows_forward(const SoftmaxRowForward<TI, TO>& f, void* stream, const char* where) {
  run_rows(f, softmax_rows_forward_kernel<TI, TO>, "softmax_rows_forward_kernel", stream, where);
}

template <typename TI, typename TO>
void softmax_rows_backward(const SoftmaxRowBackward<TI, TO>& f, void* stream, const char* where) {
  run_rows(f, softmax_rows_backward_kernel<TI, TO>, "softmax_rows_backward_kernel", stream, where);
}

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
MX_NN_ELEMENTS(SoftmaxOutputProbGrad<float>)
MX_NN_ELEMENTS(SoftmaxOutputProbGrad<double>)
MX_NN_ELEMENTS(SoftmaxOutputGrad<float>)
MX_NN_ELEMENTS(SoftmaxOutputGrad<double>)
MX_NN_ELEMENTS(RegressionForward<float>)
MX_NN_ELEMENTS(RegressionForward<double>)
MX_NN_ELEMENTS(RegressionBackward<float>)
MX_NN_ELEMENTS(RegressionBackward<double>)
#undef MX_NN_ELEMENTS

#define MX_SOFTMAX_ROWS(TI, TO)                                                         \
  template void softmax_rows_forward<TI, TO>(const SoftmaxRowForward<TI, TO>&, void*,   \
                                             const char*);                              \
  template void softmax_rows_backward<TI, TO>(const SoftmaxRowBackward<TI, TO>&, void*, \
                                              const char*);
MX_SOFTMAX_ROWS(float, float)
MX_SOFTMAX_ROWS(float, double)
MX_SOFTMAX_ROWS(double, float)
MX_SOFTMAX_ROWS(double, double)
#undef MX_SOFTMAX_ROWS

}  // namespace mx::op::cuda
