// Helpers of the C API tests: calls that must succeed, the message of a
// call that must fail, and handles freed at the end of a test.
#pragma once

#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "mx/c_api.h"

namespace mx::test {

#define MX_OK(call) REQUIRE_MESSAGE((call) == 0, MXGetLastError())

// The message of a call that must fail (-1).
inline std::string failure(int rc) {
  CHECK(rc == -1);
  return rc == -1 ? MXGetLastError() : "(the call succeeded)";
}

// An NDArray handle freed at the end of the scope.
class Nd {
 public:
  Nd() = default;
  explicit Nd(NDArrayHandle h) : h_(h) {}
  ~Nd() { MXNDArrayFree(h_); }
  Nd(const Nd&) = delete;
  Nd& operator=(const Nd&) = delete;
  Nd(Nd&& o) noexcept : h_(o.h_) { o.h_ = nullptr; }
  NDArrayHandle get() const { return h_; }
  NDArrayHandle* out() { return &h_; }

 private:
  NDArrayHandle h_ = nullptr;
};

// A float32 CPU array with these values.
inline Nd make_array(const std::vector<mx_uint>& shape, const std::vector<float>& values) {
  Nd a;
  MX_OK(MXNDArrayCreateEx(shape.data(), static_cast<mx_uint>(shape.size()), 1, 0, 0, 0, a.out()));
  MX_OK(MXNDArraySyncCopyFromCPU(a.get(), values.data(), values.size()));
  return a;
}

inline std::vector<float> read(NDArrayHandle h) {
  mx_uint ndim = 0;
  const mx_uint* dims = nullptr;
  MX_OK(MXNDArrayGetShape(h, &ndim, &dims));
  size_t n = 1;
  for (mx_uint i = 0; i < ndim; ++i) n *= dims[i];
  std::vector<float> v(n);
  MX_OK(MXNDArraySyncCopyToCPU(h, v.data(), v.size()));
  return v;
}

inline std::vector<mx_uint> shape_of(NDArrayHandle h) {
  mx_uint ndim = 0;
  const mx_uint* dims = nullptr;
  MX_OK(MXNDArrayGetShape(h, &ndim, &dims));
  return {dims, dims + ndim};
}

inline OpHandle op_handle(const char* name) {
  OpHandle op = nullptr;
  MX_OK(NNGetOpHandle(name, &op));
  return op;
}

// One call with new outputs; returns them (each freed by the caller).
inline std::vector<Nd> invoke(const char* op, std::vector<NDArrayHandle> inputs,
                              std::vector<const char*> keys = {},
                              std::vector<const char*> vals = {}) {
  int n = 0;
  NDArrayHandle* outs = nullptr;
  MX_OK(MXImperativeInvoke(op_handle(op), static_cast<int>(inputs.size()), inputs.data(), &n, &outs,
                           static_cast<int>(keys.size()), keys.data(), vals.data()));
  std::vector<Nd> result;
  for (int i = 0; i < n; ++i) result.emplace_back(outs[i]);
  return result;
}

}  // namespace mx::test
