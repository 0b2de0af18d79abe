#include "capi/c_api_util.h"

namespace mx::capi {

const char* handle_kind_name(HandleKind kind) {
  switch (kind) {
    case HandleKind::kNDArray: return "an NDArray handle";
    case HandleKind::kSymbol: return "a Symbol handle";
    case HandleKind::kExecutor: return "an Executor handle";
    case HandleKind::kKVStore: return "a KVStore handle";
    case HandleKind::kDataIter: return "a DataIter handle";
    case HandleKind::kFreed: return "a freed handle";
  }
  return "not a handle of this library";
}

void require(bool ok, const char* what) {
  if (!ok) throw InputError(what);
}

Context device(int dev_type, int dev_id) {
  if (dev_id < 0) throw InputError(str("dev_id ", dev_id, " is negative"));
  if (dev_type == 1) return Context::cpu(dev_id);
  if (dev_type == 2) return Context::gpu(dev_id);
  if (dev_type == 3) return {DeviceType::kCPUPinned, dev_id};
  throw InputError(str("dev_type ", dev_type, " is not 1 (cpu), 2 (gpu) or 3 (cpu_pinned)"));
}

int device_type_of(Context ctx) { return static_cast<int>(ctx.type); }

DType dtype_from_flag(int flag, const char* what) {
  if (!is_valid_dtype_flag(flag))
    throw InputError(str(what, " ", flag, " is not a type flag (0 float32, 1 float64, ",
                         "2 float16, 3 uint8, 4 int32, 5 int8, 6 int64)"));
  return static_cast<DType>(flag);
}

std::vector<std::string> strings(size_t count, const char* const* items, const char* name) {
  std::vector<std::string> out;
  if (count > 0 && items == nullptr) throw InputError(str(name, " is NULL"));
  for (size_t i = 0; i < count; ++i) {
    if (items[i] == nullptr) throw InputError(str(name, "[", i, "] is NULL"));
    out.emplace_back(items[i]);
  }
  return out;
}

std::map<std::string, std::string> string_pairs(size_t count, const char* const* keys,
                                                const char* const* vals) {
  const auto k = strings(count, keys, "param_keys");
  const auto v = strings(count, vals, "param_vals");
  std::map<std::string, std::string> out;
  for (size_t i = 0; i < count; ++i)
    if (!out.emplace(k[i], v[i]).second)
      throw InputError(str("parameter '", k[i], "' is given twice"));
  return out;
}

std::vector<autograd::Array> arrays(size_t count, void* const* handles, const char* name,
                                    bool allow_null) {
  std::vector<autograd::Array> out;
  if (count > 0 && handles == nullptr) throw InputError(str(name, " is NULL"));
  for (size_t i = 0; i < count; ++i) {
    if (allow_null && handles[i] == nullptr) {
      out.emplace_back();
      continue;
    }
    const std::string what = str(name, "[", i, "]");
    out.push_back(handle_cast<ApiNDArray>(handles[i], what.c_str()).array);
  }
  return out;
}

void* new_array_handle(autograd::Array array) {
  return to_handle(std::make_unique<ApiNDArray>(std::move(array)));
}

const char** ReturnStrings::set(std::vector<std::string> values) {
  strings = std::move(values);
  pointers.clear();
  for (const auto& s : strings) pointers.push_back(s.c_str());
  return pointers.data();
}

template <typename Dim>
void ReturnShapes<Dim>::set(const std::vector<Shape>& shapes, bool numpy_unknown) {
  dims.assign(shapes.size(), {});
  ndim.clear();
  data.clear();
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Shape& s = shapes[i];
    if (!s.rank_known()) {
      ndim.push_back(numpy_unknown ? Dim(-1) : Dim(0));
    } else {
      for (int d = 0; d < s.ndim(); ++d)
        dims[i].push_back(s[d] < 0 ? (numpy_unknown ? Dim(-1) : Dim(0)) : static_cast<Dim>(s[d]));
      ndim.push_back(static_cast<Dim>(s.ndim()));
    }
  }
  for (const auto& d : dims) data.push_back(d.data());
}

template struct ReturnShapes<uint32_t>;
template struct ReturnShapes<int>;

}  // namespace mx::capi
