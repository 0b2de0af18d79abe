// Element-type conversion shared by Cast and the AMP casts (amp_cast,
// amp_multicast): each value as kernels::convert_value does.
#pragma once

#include "op/tensor_ref.h"

namespace mx::op {

// dst (req) src converted to dst's type; the same shape (size) is the caller's.
void cast_values(const TensorRef& src, const TensorRef& dst, OpReq req);

}  // namespace mx::op
