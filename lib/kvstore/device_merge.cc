#include "kvstore/device_merge.h"

#include <cstring>
#include <type_traits>

#include "base/error.h"

namespace mx::kvstore {

void push_sum(const std::vector<NDArray>& values, const NDArray& dst, int priority,
              const std::string& name) {
  MX_CHECK(!values.empty());
  std::vector<NDArray> local;
  for (const auto& v : values) local.push_back(v.ctx() == dst.ctx() ? v : v.copy_to(dst.ctx()));
  if (dst.ctx().is_gpu())
    throw Error("kvstore: summing on a GPU is not implemented; merge on the CPU");
  std::vector<Var*> reads;
  for (const auto& v : local) reads.push_back(v.var());
  Engine::get().push(
      [local, dst](RunContext) {
        dispatch_dtype(dst.dtype(), [&](auto tag) {
          using T = typename decltype(tag)::type;
          if constexpr (std::is_floating_point_v<T>) {
            T* out = dst.data<T>();
            const int64_t n = dst.size();
            const T* first = local[0].data<T>();
            size_t next = 1;
            if (local.size() >= 2) {
              // The first two in one pass (two CPU replicas: the whole sum).
              const T* second = local[1].data<T>();
              for (int64_t i = 0; i < n; ++i) out[i] = first[i] + second[i];
              next = 2;
            } else if (out != first) {
              std::memcpy(out, first, static_cast<size_t>(n) * sizeof(T));
            }
            for (size_t d = next; d < local.size(); ++d) {
              const T* in = local[d].data<T>();
              for (int64_t i = 0; i < n; ++i) out[i] += in[i];
            }
          }
        });
      },
      dst.ctx(), reads, {dst.var()}, FnProperty::kNormal, priority, name);
}

void push_copy(const NDArray& src, const NDArray& dst, int priority, const std::string& name) {
  if (src.ctx().is_gpu() || dst.ctx().is_gpu()) {
    NDArray target = dst;
    src.copy_to(target);
    return;
  }
  Engine::get().push(
      [src, dst](RunContext) { std::memcpy(dst.raw_data(), src.raw_data(), dst.bytes()); },
      dst.ctx(), {src.var()}, {dst.var()}, FnProperty::kCopy, priority, name);
}

void check_arrays(int key, const std::vector<NDArray>& arrays, const Shape& shape, DType dtype,
                  const char* what) {
  if (arrays.empty()) throw InputError(str("kvstore: key ", key, ": no ", what, " arrays given"));
  for (const auto& a : arrays) {
    if (a.is_none() || a.shape() != shape || a.dtype() != dtype)
      throw InputError(str("kvstore: key ", key, ": ", what, " array ",
                           a.is_none() ? std::string("none") : a.describe(),
                           " does not match the key's ", dtype_name(dtype), " ", shape));
  }
}

}  // namespace mx::kvstore
