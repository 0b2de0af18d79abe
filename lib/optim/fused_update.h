// The one engine operation an optimizer pushes per parameter update: it
// reads the gradient, writes the weight and the state arrays, and runs the
// optimizer's Step functor (update_kernels.h) over every element: in
// parallel chunks on the CPU, as one kernel launch on the weight's GPU
// stream. Internal to lib/optim.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "base/parallel.h"
#include "engine/engine.h"
#include "ndarray/ndarray.h"
#include "optim/update_kernels.h"
#if MX_USE_CUDA
#include "optim/update_gpu.h"
#endif

namespace mx::optim::detail {

inline constexpr size_t kMaxStates = kernels::kMaxStates;
// Elements per parallel chunk: large enough that splitting pays off.
inline constexpr int64_t kUpdateGrain = int64_t{1} << 15;

// Checks that weight, gradient and state are float32/float64 arrays of one
// shape, dtype and device and that there are `expected_states` state arrays;
// throws Error naming the optimizer and the offending array.
void check_update_arrays(const std::string& optimizer, const NDArray& weight, const NDArray& grad,
                         const std::vector<NDArray>& state, size_t expected_states);

// The arrays' data pointers as T (void: untyped, for the GPU entry points).
template <typename T>
kernels::UpdateArrays<T> update_arrays(const NDArray& weight, const NDArray& grad,
                                       const std::vector<NDArray>& state) {
  kernels::UpdateArrays<T> a;
  if constexpr (std::is_void_v<T>) {
    a.w = weight.raw_data();
    a.g = grad.raw_data();
    for (size_t k = 0; k < state.size(); ++k) a.s[k] = state[k].raw_data();
  } else {
    a.w = weight.data<T>();
    a.g = grad.data<T>();
    for (size_t k = 0; k < state.size(); ++k) a.s[k] = state[k].data<T>();
  }
  return a;
}

// Pushes the update of Args (one of update_kernels.h's *Args) over
// [0, weight.size()) as one engine operation on the weight's device. The
// arrays are expected to have passed check_update_arrays.
template <typename Args>
void push_fused_update(const std::string& name, const NDArray& weight, const NDArray& grad,
                       const std::vector<NDArray>& state, const Args& args) {
  std::vector<Var*> writes{weight.var()};
  for (const auto& s : state) writes.push_back(s.var());
  Engine::get().push(
      [weight, grad, state, args](RunContext rctx) {
#if MX_USE_CUDA
        if (weight.ctx().is_gpu()) {
          gpu::run_update(args, weight.dtype(), update_arrays<void>(weight, grad, state),
                          weight.size(), rctx.stream);
          return;
        }
#else
        (void)rctx;
#endif
        auto run = [&](auto zero) {
          using T = decltype(zero);
          const typename Args::template Step<T> step(args);
          const kernels::UpdateArrays<T> arrays = update_arrays<T>(weight, grad, state);
          parallel_for(weight.size(), kUpdateGrain, [&](int64_t begin, int64_t end) {
            // Local copies: stores through the weight pointer cannot alias
            // them, so the loop keeps the scalars and pointers in registers.
            const auto local_step = step;
            const auto a = arrays;
            for (int64_t i = begin; i < end; ++i) local_step(i, a);
          });
        };
        if (weight.dtype() == DType::kFloat64)
          run(double{});
        else
          run(float{});
      },
      weight.ctx(), {grad.var()}, std::move(writes), FnProperty::kNormal, 0, name + " update");
}

}  // namespace mx::optim::detail
