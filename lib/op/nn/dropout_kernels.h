// Dropout's GPU functors (dropout_gpu.cu): the mask drawn with Philox from
// (seed, mask index), so each element's draw is independent of the others
// and of the launch shape, and the mask applied with broadcasting along the
// shared axes. tests/op/test_nn_kernels_host.cc runs them on the CPU: the
// fraction kept and the scale of the drawn mask, the application against
// the CPU operator's. (The CPU kernel draws from the Mersenne twister in
// order, so GPU and CPU masks differ.)
#pragma once

#include <cstdint>

#include "base/philox.h"
#include "base/shape.h"
#include "op/tensor_ref.h"

namespace mx::op {

// mask[i] = scale with probability keep, else 0; uniform draw i of `seed`.
template <typename T>
struct DropoutMaskDraw {
  T* mask;
  uint64_t seed;
  double keep;
  T scale;
  MX_HOST_DEVICE void operator()(int64_t i) const {
    mask[i] = philox::uniform01(seed, static_cast<uint64_t>(i)) < keep ? scale : T(0);
  }
};

// mask[i] = 1 (dropout inactive).
template <typename T>
struct DropoutMaskOnes {
  T* mask;
  MX_HOST_DEVICE void operator()(int64_t i) const { mask[i] = T(1); }
};

// The mask offset of data element i when the mask has size 1 along some
// axes (it is broadcast along them); `same`: the shapes are equal.
struct DropoutMaskIndex {
  int ndim = 0;
  bool same = true;
  int64_t dims[Shape::kMaxNdim] = {};
  int64_t mask_strides[Shape::kMaxNdim] = {};  // 0 along broadcast axes

  MX_HOST_DEVICE int64_t operator()(int64_t i) const {
    if (same) return i;
    int64_t m = 0;
    for (int d = ndim - 1; d >= 0; --d) {
      m += (i % dims[d]) * mask_strides[d];
      i /= dims[d];
    }
    return m;
  }
};

inline DropoutMaskIndex dropout_mask_index(const Shape& data, const Shape& mask) {
  DropoutMaskIndex idx;
  idx.ndim = data.ndim();
  idx.same = data == mask;
  int64_t stride = 1;
  for (int d = data.ndim() - 1; d >= 0; --d) {
    idx.dims[d] = data[d];
    idx.mask_strides[d] = mask[d] == 1 ? 0 : stride;
    stride *= mask[d];
  }
  return idx;
}

// out[i] (req) in[i] * mask[m(i)]: the forward (in = x) and backward
// (in = dy) passes; out may be in itself.
template <typename T>
struct DropoutApply {
  const T* in;
  const T* mask;
  T* out;
  DropoutMaskIndex m;
  OpReq req;
  MX_HOST_DEVICE void operator()(int64_t i) const { assign(out + i, req, in[i] * mask[m(i)]); }
};

}  // namespace mx::op
