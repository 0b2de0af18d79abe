// NDArray: an imperative tensor (MXNet paper, section 2.2). A handle to a
// shared chunk of device memory guarded by one engine variable, with its own
// shape, element offset and dtype, so slices and reshapes are views that
// share memory. Every operation on it is pushed to the engine and returns at
// once; reading values (to_vector, wait_to_read) waits for them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/context.h"
#include "base/dtype.h"
#include "base/shape.h"
#include "engine/engine.h"
#include "storage/storage.h"

namespace mx {

class NDArray {
 public:
  // A "none" array: no shape, no memory (as in MXNet).
  NDArray() = default;
  // Allocates shape.size() elements on ctx; the values are undefined.
  NDArray(const Shape& shape, Context ctx = Context::cpu(), DType dtype = DType::kFloat32);

  static NDArray zeros(const Shape& shape, Context ctx = Context::cpu(),
                       DType dtype = DType::kFloat32);
  static NDArray full(const Shape& shape, double value, Context ctx = Context::cpu(),
                      DType dtype = DType::kFloat32);
  // Copies `values` (shape.size() of them) into a new array.
  template <typename T>
  static NDArray from_vector(const Shape& shape, std::vector<T> values,
                             Context ctx = Context::cpu());

  bool is_none() const { return chunk_ == nullptr; }
  const Shape& shape() const { return shape_; }
  DType dtype() const { return dtype_; }
  Context ctx() const;
  int64_t size() const { return is_none() ? 0 : shape_.size(); }
  size_t bytes() const { return static_cast<size_t>(size()) * dtype_size(dtype_); }
  // The engine variable that guards this array's memory (shared by views).
  Var* var() const;
  // True when both arrays view the same memory chunk.
  bool shares_memory_with(const NDArray& other) const { return chunk_ == other.chunk_; }

  // Address of the first element. Only valid inside an engine operation that
  // lists var(), or after wait_to_read().
  void* raw_data() const;
  template <typename T>
  T* data() const {
    check_dtype(dtype_of<T>);
    return static_cast<T*>(raw_data());
  }

  // Blocks until every pending write to this array is done; re-throws the
  // failure of the operation that produced it.
  void wait_to_read() const;
  // Values as a vector of T (waits). T must be the array's dtype.
  template <typename T>
  std::vector<T> to_vector() const;
  // The single value of a one-element array, converted to double (waits).
  double scalar() const;

  // Views along the first axis and of another shape; they share memory.
  NDArray slice(int64_t begin, int64_t end) const;
  NDArray at(int64_t index) const;  // slice(index, index + 1) without the first axis
  // `shape` may contain one -1, inferred from the size.
  NDArray reshape(const Shape& shape) const;

  // The first bytes of this array's memory seen with another shape and
  // dtype (memory planners carve typed entries out of byte blocks).
  NDArray view(const Shape& shape, DType dtype) const;

  // Asynchronous fill with `value` converted to the dtype.
  void fill(double value);
  // Asynchronous copy into `dst` (same shape and dtype; any contexts).
  void copy_to(NDArray& dst) const;
  NDArray copy_to(Context ctx) const;
  NDArray copy() const { return copy_to(ctx()); }

  std::string describe() const;  // "float32 (2, 3) on cpu:0"

 private:
  struct Chunk;
  void check_dtype(DType expected) const;
  void check_not_none(const char* what) const;

  std::shared_ptr<Chunk> chunk_;
  Shape shape_;
  int64_t offset_ = 0;  // in elements, from the start of the chunk
  DType dtype_ = DType::kFloat32;
};

// Element-wise arithmetic; shapes, dtypes and contexts must match.
NDArray operator+(const NDArray& a, const NDArray& b);
NDArray operator-(const NDArray& a, const NDArray& b);
NDArray operator*(const NDArray& a, const NDArray& b);
NDArray operator/(const NDArray& a, const NDArray& b);
NDArray& operator+=(NDArray& a, const NDArray& b);
NDArray& operator-=(NDArray& a, const NDArray& b);
NDArray& operator*=(NDArray& a, const NDArray& b);
NDArray& operator/=(NDArray& a, const NDArray& b);
// Scalar arithmetic (the scalar is converted to the array's dtype's compute type).
NDArray operator+(const NDArray& a, double s);
NDArray operator-(const NDArray& a, double s);
NDArray operator*(const NDArray& a, double s);
NDArray operator/(const NDArray& a, double s);
NDArray operator+(double s, const NDArray& a);
NDArray operator-(double s, const NDArray& a);
NDArray operator*(double s, const NDArray& a);
NDArray operator/(double s, const NDArray& a);
NDArray& operator+=(NDArray& a, double s);
NDArray& operator-=(NDArray& a, double s);
NDArray& operator*=(NDArray& a, double s);
NDArray& operator/=(NDArray& a, double s);

}  // namespace mx
