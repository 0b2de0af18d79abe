#include "ndarray/ndarray.h"

#include <cstring>

#include "base/error.h"
#include "base/gpu.h"
#include "ndarray/elementwise.h"

namespace mx {

// Memory and the engine variable that guards it. When the last array that
// views the chunk goes away, the variable is deleted after its pending
// operations, and the memory is returned to the pool only then.
struct NDArray::Chunk {
  Storage storage;
  VarHandle var;
  Context ctx;

  Chunk(size_t bytes, Context context, const std::string& what)
      : storage(allocate_storage(context, bytes, what)),
        var(Engine::get().new_var()),
        ctx(context) {}
  Chunk(const Chunk&) = delete;
  Chunk& operator=(const Chunk&) = delete;
  ~Chunk() {
    auto memory = std::make_shared<Storage>(std::move(storage));
    var.release([memory] { memory->reset(); });
  }
};

NDArray::NDArray(const Shape& shape, Context ctx, DType dtype) : shape_(shape), dtype_(dtype) {
  if (!shape.is_known())
    throw Error("cannot create an array of unknown shape " + shape.to_string());
  chunk_ = std::make_shared<Chunk>(static_cast<size_t>(shape.size()) * dtype_size(dtype), ctx,
                                   "an array of shape " + shape.to_string());
}

NDArray NDArray::zeros(const Shape& shape, Context ctx, DType dtype) {
  return full(shape, 0.0, ctx, dtype);
}

NDArray NDArray::full(const Shape& shape, double value, Context ctx, DType dtype) {
  NDArray a(shape, ctx, dtype);
  a.fill(value);
  return a;
}

template <typename T>
NDArray NDArray::from_vector(const Shape& shape, std::vector<T> values, Context ctx) {
  if (!shape.is_known() || static_cast<int64_t>(values.size()) != shape.size())
    throw Error(
        str("from_vector: ", values.size(), " values do not fill shape ", shape.to_string()));
  NDArray host(shape, Context::cpu(), dtype_of<T>);
  auto shared = std::make_shared<std::vector<T>>(std::move(values));
  Engine::get().push(
      [host, shared](RunContext) {
        // memcpy takes no null pointers, not even for 0 bytes (an empty array)
        if (!shared->empty())
          std::memcpy(host.raw_data(), shared->data(), shared->size() * sizeof(T));
      },
      Context::cpu(), {}, {host.var()}, FnProperty::kNormal, 0, "from_vector");
  return ctx == Context::cpu() ? host : host.copy_to(ctx);
}

Context NDArray::ctx() const { return chunk_ ? chunk_->ctx : Context::cpu(); }
Var* NDArray::var() const { return chunk_ ? chunk_->var.get() : nullptr; }

void* NDArray::raw_data() const {
  if (!chunk_) return nullptr;
  return static_cast<char*>(chunk_->storage.data()) +
         offset_ * static_cast<int64_t>(dtype_size(dtype_));
}

void NDArray::check_dtype(DType expected) const {
  if (expected != dtype_)
    throw Error(
        str("array is ", dtype_name(dtype_), ", but ", dtype_name(expected), " was asked for"));
}

void NDArray::check_not_none(const char* what) const {
  if (is_none()) throw Error(str(what, " on a none array (one that was never allocated)"));
}

void NDArray::wait_to_read() const {
  if (chunk_) Engine::get().wait_for_var(var());
}

template <typename T>
std::vector<T> NDArray::to_vector() const {
  check_dtype(dtype_of<T>);
  if (is_none()) return {};
  NDArray host = ctx().is_gpu() ? copy_to(Context::cpu()) : *this;
  host.wait_to_read();
  const T* p = static_cast<const T*>(host.raw_data());
  return std::vector<T>(p, p + size());
}

double NDArray::scalar() const {
  if (size() != 1) throw Error("scalar() of an array with " + std::to_string(size()) + " elements");
  return dispatch_dtype(dtype_, [&](auto tag) {
    using T = typename decltype(tag)::type;
    return static_cast<double>(static_cast<ComputeType<T>>(to_vector<T>()[0]));
  });
}

NDArray NDArray::slice(int64_t begin, int64_t end) const {
  check_not_none("slice");
  if (shape_.ndim() < 1) throw Error("cannot slice a 0-d array");
  if (begin < 0 || end < begin || end > shape_[0])
    throw Error(str("slice [", begin, ", ", end, ") is outside [0, ", shape_[0],
                    ") of the first axis of shape ", shape_.to_string()));
  NDArray view = *this;
  view.shape_[0] = end - begin;
  view.offset_ = offset_ + begin * shape_.prod(1, shape_.ndim());
  return view;
}

NDArray NDArray::at(int64_t index) const {
  NDArray row = slice(index, index + 1);
  std::vector<int64_t> dims(shape_.begin() + 1, shape_.end());
  row.shape_ = Shape(dims);
  return row;
}

NDArray NDArray::reshape(const Shape& shape) const {
  check_not_none("reshape");
  Shape target = shape;
  int infer = -1;
  int64_t known = 1;
  for (int i = 0; i < target.ndim(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) throw Error("reshape to " + shape.to_string() + ": more than one -1");
      infer = i;
    } else if (target[i] < 0) {
      throw Error("reshape to " + shape.to_string() + ": negative dimension");
    } else {
      known *= target[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || size() % known != 0)
      throw Error(str("cannot reshape ", shape_.to_string(), " to ", shape.to_string()));
    target[infer] = size() / known;
  }
  if (!target.rank_known() || target.size() != size())
    throw Error(str("cannot reshape ", shape_.to_string(), " (", size(), " elements) to ",
                    shape.to_string()));
  NDArray view = *this;
  view.shape_ = target;
  return view;
}

NDArray NDArray::view(const Shape& shape, DType dtype) const {
  check_not_none("view");
  const int64_t offset_bytes = offset_ * static_cast<int64_t>(dtype_size(dtype_));
  const size_t bytes = static_cast<size_t>(shape.size()) * dtype_size(dtype);
  if (!shape.is_known() || offset_bytes % static_cast<int64_t>(dtype_size(dtype)) != 0 ||
      static_cast<size_t>(offset_bytes) + bytes > chunk_->storage.size())
    throw Error(str("cannot view ", describe(), " as ", dtype_name(dtype), " ", shape.to_string()));
  NDArray v = *this;
  v.shape_ = shape;
  v.dtype_ = dtype;
  v.offset_ = offset_bytes / static_cast<int64_t>(dtype_size(dtype));
  return v;
}

void NDArray::fill(double value) {
  check_not_none("fill");
  NDArray self = *this;  // keeps the chunk alive until the operation runs
  Engine::get().push(
      [self, value](RunContext rctx) {
        if (rctx.ctx.is_gpu())
          fill_kernel_gpu(self.dtype_, self.raw_data(), value, self.size(), rctx.stream);
        else
          fill_kernel_cpu(self.dtype_, self.raw_data(), value, self.size());
      },
      ctx(), {}, {var()}, FnProperty::kNormal, 0, "fill");
}

void NDArray::copy_to(NDArray& dst) const {
  check_not_none("copy_to");
  dst.check_not_none("copy_to");
  if (dst.shape_ != shape_ || dst.dtype_ != dtype_)
    throw Error(str("copy_to: source is ", describe(), " but destination is ", dst.describe()));
  NDArray src = *this;
  NDArray out = dst;
  const bool gpu_involved = ctx().is_gpu() || dst.ctx().is_gpu();
  // A transfer runs on the GPU's copy worker; the GPU side decides the stream.
  Context run_on = dst.ctx().is_gpu() ? dst.ctx() : ctx();
  Engine::get().push(
      [src, out, gpu_involved](RunContext rctx) {
        // An empty array has no storage: its data pointer may be null.
        if (src.bytes() == 0) return;
        if (!gpu_involved) {
          std::memmove(out.raw_data(), src.raw_data(), src.bytes());
          return;
        }
        gpu::CopyKind kind = !src.ctx().is_gpu()   ? gpu::CopyKind::kHostToDevice
                             : !out.ctx().is_gpu() ? gpu::CopyKind::kDeviceToHost
                                                   : gpu::CopyKind::kDeviceToDevice;
        gpu::copy(out.raw_data(), src.raw_data(), src.bytes(), kind, rctx.stream);
      },
      run_on, {var()}, {dst.var()}, gpu_involved ? FnProperty::kCopy : FnProperty::kNormal, 0,
      "copy " + ctx().to_string() + " -> " + dst.ctx().to_string());
}

NDArray NDArray::copy_to(Context ctx) const {
  check_not_none("copy_to");
  NDArray dst(shape_, ctx, dtype_);
  copy_to(dst);
  return dst;
}

std::string NDArray::describe() const {
  if (is_none()) return "none array";
  return str(dtype_name(dtype_), " ", shape_.to_string(), " on ", ctx().to_string());
}

#define MX_INSTANTIATE(T)                                                          \
  template NDArray NDArray::from_vector<T>(const Shape&, std::vector<T>, Context); \
  template std::vector<T> NDArray::to_vector<T>() const;
MX_INSTANTIATE(float)
MX_INSTANTIATE(double)
MX_INSTANTIATE(half_t)
MX_INSTANTIATE(uint8_t)
MX_INSTANTIATE(int32_t)
MX_INSTANTIATE(int8_t)
MX_INSTANTIATE(int64_t)
MX_INSTANTIATE(bf16_t)
#undef MX_INSTANTIATE

}  // namespace mx
