// The softmax kernel shared by softmax/log_softmax and SoftmaxOutput:
// numerically stable (the maximum is subtracted before exp), along the
// middle axis of an (outer, size, inner) view, accumulating in float64.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "base/parallel.h"
#include "op/kernel_util.h"
#include "op/nn/softmax_kernels.h"
#include "op/tensor/tensor_util.h"
#include "op/vmath/vmath.h"

namespace mx::op {

inline SoftmaxLayout softmax_layout(const Shape& shape, int axis) {
  return {shape.prod(0, axis), shape[axis], shape.prod(axis + 1, shape.ndim())};
}

// y = softmax(x / temperature) (or its log) along the axis. `lengths`
// (outer * inner values, or null) limits each vector to its first elements;
// the rest of the output is 0.
template <typename TI, typename TO>
void softmax_forward(const TI* x, TO* y, const SoftmaxLayout& l, double temperature, bool log,
                     OpReq req, const int64_t* lengths = nullptr) {
  if (req == OpReq::kNull) return;
  const double inv_t = 1.0 / temperature;
  const int64_t block = l.size * l.inner;
  parallel_for(
      l.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(block, 1)),
      [&](int64_t o0, int64_t o1) {
        std::vector<double> top(static_cast<size_t>(l.inner));
        std::vector<double> sum(static_cast<size_t>(l.inner));
        for (int64_t o = o0; o < o1; ++o) {
          const TI* xo = x + o * block;
          TO* yo = y + o * block;
          auto len = [&](int64_t j) {
            return lengths ? std::clamp<int64_t>(lengths[o * l.inner + j], 0, l.size) : l.size;
          };
          // Rows of the inner axis at a time: contiguous reads.
          std::fill(top.begin(), top.end(), -std::numeric_limits<double>::infinity());
          std::fill(sum.begin(), sum.end(), 0.0);
          for (int64_t k = 0; k < l.size; ++k)
            for (int64_t j = 0; j < l.inner; ++j)
              if (k < len(j))
                top[static_cast<size_t>(j)] =
                    std::max(top[static_cast<size_t>(j)], static_cast<double>(xo[k * l.inner + j]));
          for (int64_t k = 0; k < l.size; ++k)
            for (int64_t j = 0; j < l.inner; ++j)
              if (k < len(j))
                sum[static_cast<size_t>(j)] += std::exp(
                    (static_cast<double>(xo[k * l.inner + j]) - top[static_cast<size_t>(j)]) *
                    inv_t);
          for (int64_t k = 0; k < l.size; ++k) {
            for (int64_t j = 0; j < l.inner; ++j) {
              const auto jj = static_cast<size_t>(j);
              double v = 0.0;
              if (k < len(j)) {
                const double z = (static_cast<double>(xo[k * l.inner + j]) - top[jj]) * inv_t;
                v = log ? z - std::log(sum[jj]) : std::exp(z) / sum[jj];
              }
              store(yo + k * l.inner + j, req, static_cast<TO>(v));
            }
          }
        }
      });
}

// softmax_forward's usual case, float32 vectors in rows (inner 1), not
// log, written (not added): vmath's row kernel (max, exp and sum in SIMD
// lanes, the sum gathered in float64). The
// float64 std::exp took 2.9 ms of a char-LSTM's 63 ms step in
// SoftmaxOutput (2048 rows of 96 classes), and 7.6 ms per layer of a
// char-GPT's attention (4096 rows of 64 keys per head). Each row is read
// before it is written (the output may be the input).
inline void softmax_rows(const float* x, float* y, const SoftmaxLayout& l, double temperature) {
  const int64_t size = l.size;
  const auto inv_t = static_cast<float>(1.0 / temperature);
  parallel_for(l.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(size, 1)),
               [&](int64_t begin, int64_t end) {
                 const vmath::Kernels& k = vmath::active();
                 for (int64_t r = begin; r < end; ++r)
                   k.softmax_row(x + r * size, y + r * size, size, inv_t);
               });
}

// The gradient of softmax_rows (dx = y * (g - sum(g * y)) / t), written,
// by vmath's row kernel (the sum gathered in float64). dx may be g.
inline void softmax_rows_backward(const float* y, const float* g, float* dx, const SoftmaxLayout& l,
                                  double temperature) {
  const int64_t size = l.size;
  const auto inv_t = static_cast<float>(1.0 / temperature);
  parallel_for(l.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(size, 1)),
               [&](int64_t begin, int64_t end) {
                 const vmath::Kernels& k = vmath::active();
                 for (int64_t r = begin; r < end; ++r)
                   k.softmax_row_backward(y + r * size, g + r * size, dx + r * size, size, inv_t);
               });
}

// The gradient of softmax_forward: from the output y and its gradient g,
// dx = y * (g - sum(g * y)) / t, or for log: dx = (g - exp(y) * sum(g)) / t.
template <typename TI, typename TO>
void softmax_backward(const TO* y, const TO* g, TI* dx, const SoftmaxLayout& l, double temperature,
                      bool log, OpReq req, const int64_t* lengths = nullptr) {
  if (req == OpReq::kNull) return;
  const double inv_t = 1.0 / temperature;
  const int64_t block = l.size * l.inner;
  parallel_for(l.outer, std::max<int64_t>(1, kParallelGrain / std::max<int64_t>(block, 1)),
               [&](int64_t o0, int64_t o1) {
                 std::vector<double> sum(static_cast<size_t>(l.inner));
                 for (int64_t o = o0; o < o1; ++o) {
                   const TO* yo = y + o * block;
                   const TO* go = g + o * block;
                   TI* dxo = dx + o * block;
                   auto len = [&](int64_t j) {
                     return lengths ? std::clamp<int64_t>(lengths[o * l.inner + j], 0, l.size)
                                    : l.size;
                   };
                   std::fill(sum.begin(), sum.end(), 0.0);
                   for (int64_t k = 0; k < l.size; ++k)
                     for (int64_t j = 0; j < l.inner; ++j)
                       if (k < len(j)) {
                         const int64_t i = k * l.inner + j;
                         sum[static_cast<size_t>(j)] +=
                             log ? static_cast<double>(go[i])
                                 : static_cast<double>(go[i]) * static_cast<double>(yo[i]);
                       }
                   for (int64_t k = 0; k < l.size; ++k) {
                     for (int64_t j = 0; j < l.inner; ++j) {
                       const int64_t i = k * l.inner + j;
                       const double s = sum[static_cast<size_t>(j)];
                       double v = 0.0;
                       if (k < len(j)) {
                         const double yi = static_cast<double>(yo[i]);
                         const double gi = static_cast<double>(go[i]);
                         v = (log ? gi - std::exp(yi) * s : yi * (gi - s)) * inv_t;
                       }
                       store(dxo + i, req, static_cast<TI>(v));
                     }
                   }
                 }
               });
}

}  // namespace mx::op
