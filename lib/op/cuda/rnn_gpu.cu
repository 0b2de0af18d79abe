// The RNN operator on a GPU: the device of rnn_driver.h. GEMMs go to cuBLAS
// on the operation's stream (beta 0 writes, beta 1 adds); each step's
// per-element functor runs as one grid-stride kernel; the dropout mask
// between layers is drawn with Philox from a seed of the RNG resource (as
// Dropout's GPU kernel does), so a seeded run is reproducible. In float16
// and bfloat16 (mixed precision) the products sum in float32 on tensor cores
// and the steps compute in float: the driver runs on the host types (half_t,
// bf16_t) and each functor is launched as its device-type twin (on_device).
#include "op/cuda/cublas_gemm.h"
#include "op/cuda/device_value.cuh"
#include "op/cuda/launch.cuh"
#include "op/cuda/rnn_gpu.h"
#include "op/infer_util.h"
#include "op/nn/dropout_kernels.h"
#include "op/nn/rnn_call.h"

namespace mx::op::cuda {
namespace {

// A (rows, cols) functor over a flat index.
template <typename F>
struct Grid2d {
  F f;
  int64_t cols;
  __device__ void operator()(int64_t i) const { f(i / cols, i % cols); }
};

template <typename T>
struct GpuOps {
  const RunContext* rctx;
  std::mt19937_64* rng = nullptr;

  void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, const T* b,
            int64_t ldb, bool add, T* c, int64_t ldc) {
    const RowMajorGemm g{
        .trans_a = ta, .trans_b = tb, .m = m, .n = n, .k = k, .lda = lda, .ldb = ldb, .ldc = ldc};
    cuda::gemm(*rctx, "RNN", g, a, b, c, add ? OpReq::kAdd : OpReq::kWrite);
  }
  template <typename F>
  void grid(int64_t rows, int64_t cols, const F& f) {
    using D = typename OnDevice<F>::type;
    launch_elements(rows * cols, stream_of(rctx->stream), "RNN", Grid2d<D>{on_device(f), cols});
  }
  void draw_mask(T* mask, int64_t n, double keep) {
    const T scale = static_cast<T>(1.0 / keep);
    launch_elements(n, stream_of(rctx->stream), "RNN",
                    on_device(DropoutMaskDraw<T>{mask, (*rng)(), keep, scale}));
  }
};

}  // namespace

void rnn_forward_gpu(const RnnParam& p, const ForwardCall& c) {
  dispatch_real_amp(c.inputs[0].dtype, "RNN", [&](auto tag) {
    using T = typename decltype(tag)::type;
    GpuOps<T> ops{&c.rctx, &c.resources.rng()};
    rnn::run_forward<T>(p, c, ops);
  });
}

void rnn_backward_gpu(const RnnParam& p, const BackwardCall& c) {
  dispatch_real_amp(c.inputs[0].dtype, "RNN", [&](auto tag) {
    using T = typename decltype(tag)::type;
    GpuOps<T> ops{&c.rctx};
    rnn::run_backward<T>(p, c, ops);
  });
}

}  // namespace mx::op::cuda
