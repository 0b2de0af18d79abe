// The optimizer updates on a GPU: the Step functors of update_kernels.h run
// by launch_elements, one launch per parameter on the weight's stream.
#include "op/cuda/launch.cuh"
#include "optim/update_gpu.h"

namespace mx::optim::gpu {
namespace {

template <typename T>
kernels::UpdateArrays<T> typed(const kernels::UpdateArrays<void>& a) {
  kernels::UpdateArrays<T> t;
  t.w = static_cast<T*>(a.w);
  t.g = static_cast<const T*>(a.g);
  for (int k = 0; k < kernels::kMaxStates; ++k) t.s[k] = static_cast<T*>(a.s[k]);
  return t;
}

template <typename Args>
void launch(const Args& args, DType dtype, const kernels::UpdateArrays<void>& arrays, int64_t n,
            void* stream, const char* where) {
  auto run = [&](auto zero) {
    using T = decltype(zero);
    using Step = typename Args::template Step<T>;
    op::cuda::launch_elements(n, op::cuda::stream_of(stream), where,
                              kernels::UpdateAt<Step, T>{Step(args), typed<T>(arrays)});
  };
  if (dtype == DType::kFloat64)
    run(double{});
  else
    run(float{});
}

}  // namespace

void run_update(const kernels::SGDArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream) {
  launch(args, dtype, arrays, n, stream, "sgd update");
}
void run_update(const kernels::NAGArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream) {
  launch(args, dtype, arrays, n, stream, "nag update");
}
void run_update(const kernels::NAGPlainArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream) {
  launch(args, dtype, arrays, n, stream, "nag update");
}
void run_update(const kernels::AdamArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream) {
  launch(args, dtype, arrays, n, stream, "adam update");
}
void run_update(const kernels::AdamWArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream) {
  launch(args, dtype, arrays, n, stream, "adamw update");
}
void run_update(const kernels::RMSPropArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream) {
  launch(args, dtype, arrays, n, stream, "rmsprop update");
}
void run_update(const kernels::AdaGradArgs& args, DType dtype,
                const kernels::UpdateArrays<void>& arrays, int64_t n, void* stream) {
  launch(args, dtype, arrays, n, stream, "adagrad update");
}

}  // namespace mx::optim::gpu
