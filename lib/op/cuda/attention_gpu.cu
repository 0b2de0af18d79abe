// GPU kernels of the attention helpers besides cuBLAS: _contrib_div_sqrt_dim
// (ScaleElements of attention_kernels.h, one thread per element) and the
// zeroing of the interleaved slots no gradient product writes.
#include "op/cuda/launch.cuh"
#include "op/cuda/sequence_gpu.h"
#include "op/nn/attention_kernels.h"

namespace mx::op::cuda {

template <typename F>
void run_sequence_elements(int64_t n, void* stream, const char* where, const F& f) {
  launch_elements(n, stream_of(stream), where, f);
}

void zero_columns(const TensorRef& t, int64_t rows, int64_t pitch, int64_t offset, int64_t width,
                  void* stream, const char* where) {
  if (rows <= 0 || width <= 0) return;
  const size_t element = dtype_size(t.dtype);
  MX_CUDA_CHECK(cudaMemset2DAsync(static_cast<char*>(t.data) + offset * element, pitch * element, 0,
                                  width * element, static_cast<size_t>(rows), stream_of(stream)),
                where);
}

template void run_sequence_elements<ScaleElements<float>>(int64_t, void*, const char*,
                                                          const ScaleElements<float>&);
template void run_sequence_elements<ScaleElements<double>>(int64_t, void*, const char*,
                                                           const ScaleElements<double>&);

}  // namespace mx::op::cuda
