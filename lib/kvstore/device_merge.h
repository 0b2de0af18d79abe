// Engine operations shared by the stores: the sum of a key's values from
// several devices, in device order (so CPU results are reproducible), and
// copies with a priority.
#pragma once

#include <string>
#include <vector>

#include "ndarray/ndarray.h"

namespace mx::kvstore {

// Pushes dst = values[0] + values[1] + ... (in that order). Values on other
// devices are first copied to dst's device.
void push_sum(const std::vector<NDArray>& values, const NDArray& dst, int priority,
              const std::string& name);
// Pushes a copy of src into dst (same shape and dtype).
void push_copy(const NDArray& src, const NDArray& dst, int priority, const std::string& name);

// Throws InputError unless every array has `shape` and `dtype` (float32/64).
void check_arrays(int key, const std::vector<NDArray>& arrays, const Shape& shape, DType dtype,
                  const char* what);

}  // namespace mx::kvstore
