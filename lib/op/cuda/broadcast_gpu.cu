// GPU kernels of the broadcast_* operators: one functor of
// tensor/broadcast_kernels.h per output element.
#include "op/cuda/broadcast_gpu.h"
#include "op/cuda/launch.cuh"

namespace mx::op::cuda {

template <typename T>
void broadcast_forward_gpu(const char* op, BroadcastKind kind, const BroadcastIndex<2>& index,
                           const T* a, const T* b, T* out, int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op, BroadcastForwardKernel<T>{index, kind, a, b, out, req});
}

template <typename T>
void broadcast_grad_gpu(const char* op, BroadcastKind kind, int side,
                        const BroadcastIndex<2>& index, const T* g, const T* a, const T* b, T* dst,
                        int64_t n, OpReq req, void* stream) {
  if (req == OpReq::kNull) return;
  launch_elements(n, stream_of(stream), op,
                  BroadcastGradKernel<T>{index, kind, side, g, a, b, dst, req});
}

#define MX_BROADCAST_GPU_INSTANTIATE(T)                                                          \
  template void broadcast_forward_gpu<T>(const char*, BroadcastKind, const BroadcastIndex<2>&,   \
                                         const T*, const T*, T*, int64_t, OpReq, void*);         \
  template void broadcast_grad_gpu<T>(const char*, BroadcastKind, int, const BroadcastIndex<2>&, \
                                      const T*, const T*, const T*, T*, int64_t, OpReq, void*);

MX_BROADCAST_GPU_INSTANTIATE(float)
MX_BROADCAST_GPU_INSTANTIATE(double)

}  // namespace mx::op::cuda
