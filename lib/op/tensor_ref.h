// TensorRef: what a kernel sees of an array — a pointer, a shape and a dtype
// (MXNet's TBlob). Kernels never own memory; the executor or the imperative
// invoker provides it.
#pragma once

#include <cstdint>

#include "base/dtype.h"
#include "base/error.h"
#include "base/host_device.h"
#include "base/shape.h"

namespace mx {
class Var;
}

namespace mx::op {

struct TensorRef {
  void* data = nullptr;
  Shape shape;
  DType dtype = DType::kFloat32;
  // The array's engine variable when the caller knows it (the executor and
  // op::invoke do): a kernel may cache data derived from an input under its
  // (uid, version), e.g. oneDNN's reordered weights in inference.
  const Var* var = nullptr;

  int64_t size() const { return shape.size(); }
  template <typename T>
  T* ptr() const {
    MX_CHECK(dtype_of<T> == dtype, "kernel asked for ", dtype_name(dtype_of<T>),
             " but the tensor is ", dtype_name(dtype));
    return static_cast<T*>(data);
  }
  // The tensor seen as 2-D: (shape[0], rest), as FullyConnected and the
  // output layers flatten their input.
  Shape flat2d() const {
    return Shape{shape.ndim() > 0 ? shape[0] : 1, shape.prod(1, shape.ndim())};
  }
};

// How a kernel must treat an output (MXNet's OpReqType): overwrite it, add to
// it (gradient accumulation), or leave it alone. kInplace is kWrite where the
// output shares the input's memory, so a kernel must read each element before
// it writes it.
enum class OpReq { kNull, kWrite, kInplace, kAdd };

// Stores `value` into *dst according to `req`.
template <typename T>
MX_HOST_DEVICE inline void assign(T* dst, OpReq req, T value) {
  if (req == OpReq::kAdd)
    *dst += value;
  else if (req != OpReq::kNull)
    *dst = value;
}

}  // namespace mx::op
