// The one engine operation an optimizer pushes per parameter update: it
// reads the gradient, writes the weight and the state arrays, and runs the
// optimizer's element-wise kernel over them in parallel chunks. Internal to
// lib/optim.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/parallel.h"
#include "engine/engine.h"
#include "ndarray/ndarray.h"

namespace mx::optim::detail {

inline constexpr size_t kMaxStates = 3;
// Elements per parallel chunk: large enough that splitting pays off.
inline constexpr int64_t kUpdateGrain = int64_t{1} << 15;

// Checks that weight, gradient and state are float32/float64 CPU arrays of
// one shape and dtype and that there are `expected_states` state arrays;
// throws Error naming the optimizer and the offending array.
void check_update_arrays(const std::string& optimizer, const NDArray& weight, const NDArray& grad,
                         const std::vector<NDArray>& state, size_t expected_states);

// mshadow_op::clip: bound the value to [-bound, bound].
template <typename T>
inline T clip(T x, T bound) {
  return x > bound ? bound : (x < -bound ? -bound : x);
}

// Pushes kernel(w, g, s, begin, end) over [0, weight.size()) as one engine
// operation; w, g and s[k] are typed pointers (float or double). The
// arrays are expected to have passed check_update_arrays.
template <typename Kernel>
void push_fused_update(const std::string& name, const NDArray& weight, const NDArray& grad,
                       const std::vector<NDArray>& state, Kernel kernel) {
  std::vector<Var*> writes{weight.var()};
  for (const auto& s : state) writes.push_back(s.var());
  Engine::get().push(
      [weight, grad, state, kernel](RunContext) {
        auto run = [&](auto zero) {
          using T = decltype(zero);
          T* w = weight.data<T>();
          const T* g = grad.data<T>();
          std::array<T*, kMaxStates> s{};
          for (size_t k = 0; k < state.size(); ++k) s[k] = state[k].data<T>();
          parallel_for(weight.size(), kUpdateGrain,
                       [&](int64_t begin, int64_t end) { kernel(w, g, s.data(), begin, end); });
        };
        if (weight.dtype() == DType::kFloat64)
          run(double{});
        else
          run(float{});
      },
      weight.ctx(), {grad.var()}, std::move(writes), FnProperty::kNormal, 0, name + " update");
}

}  // namespace mx::optim::detail
