#include "onnx/constant_folding.h"

#include <algorithm>
#include <optional>

#include "base/strings.h"
#include "onnx/import_util.h"

namespace mx::onnx {
namespace {

// Constants larger than this are left to the graph (folding is for shapes).
constexpr int64_t kMaxFolded = 1 << 20;

// A constant's values as doubles with its shape, and whether it is integral.
struct Values {
  Shape shape;
  std::vector<double> v;
  bool integral = false;
};

std::optional<Values> values_of(ImportContext& c, const std::string& name) {
  if (name.empty() || c.tensors.count(name)) return std::nullopt;
  const NDArray* a = c.constant(name);
  if (a == nullptr || a->size() > kMaxFolded) return std::nullopt;
  Values out;
  out.shape = a->shape();
  out.integral = a->dtype() != DType::kFloat32 && a->dtype() != DType::kFloat64;
  a->wait_to_read();
  dispatch_dtype(a->dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(a->raw_data());
    for (int64_t i = 0; i < a->size(); ++i) out.v.push_back(static_cast<double>(p[i]));
  });
  return out;
}

NDArray to_array(const Values& x) {
  if (x.integral) {
    std::vector<int64_t> v(x.v.begin(), x.v.end());
    return NDArray::from_vector<int64_t>(x.shape, std::move(v));
  }
  std::vector<float> v(x.v.begin(), x.v.end());
  return NDArray::from_vector<float>(x.shape, std::move(v));
}

std::vector<int64_t> axes_of(ImportContext& c, const ImportNode& n) {
  if (n.has("axes")) return n.ints("axes");
  auto a = values_of(c, n.input(1));
  if (!a) return {};
  return std::vector<int64_t>(a->v.begin(), a->v.end());
}

std::optional<Values> shape_of(ImportContext& c, const ImportNode& n) {
  const Shape s = c.shape(n.input(0));
  if (!s.rank_known()) return std::nullopt;
  const int64_t rank = s.ndim();
  int64_t start = n.i("start", 0), end = n.i("end", rank);
  if (start < 0) start += rank;
  if (end < 0) end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  Values out{Shape{end - start}, {}, true};
  for (int64_t i = start; i < end; ++i) {
    if (s[static_cast<int>(i)] < 0) return std::nullopt;  // symbolic
    out.v.push_back(static_cast<double>(s[static_cast<int>(i)]));
  }
  return out;
}

std::optional<Values> gather(ImportContext& c, const ImportNode& n) {
  auto data = values_of(c, n.input(0)), idx = values_of(c, n.input(1));
  // 1-D data: axis 0, also written -1.
  const int64_t axis = n.i("axis", 0);
  if (!data || !idx || data->shape.ndim() != 1 || idx->shape.ndim() > 1 ||
      (axis != 0 && axis != -1))
    return std::nullopt;
  const auto size = static_cast<int64_t>(data->v.size());
  Values out{idx->shape, {}, data->integral};
  for (double k : idx->v) {
    auto i = static_cast<int64_t>(k);
    if (i < 0) i += size;
    if (i < 0 || i >= size) throw InputError(str("Gather index ", k, " is out of range"));
    out.v.push_back(data->v[static_cast<size_t>(i)]);
  }
  return out;
}

std::optional<Values> unsqueeze(ImportContext& c, const ImportNode& n, bool squeeze) {
  auto x = values_of(c, n.input(0));
  if (!x) return std::nullopt;
  std::vector<int64_t> dims = x->shape.to_vector();
  std::vector<int64_t> axes = axes_of(c, n);
  const int64_t rank = static_cast<int64_t>(dims.size()) + (squeeze ? 0 : axes.size());
  for (auto& a : axes) a = a < 0 ? a + rank : a;
  std::sort(axes.begin(), axes.end());
  if (squeeze) {
    for (auto it = axes.rbegin(); it != axes.rend(); ++it)
      if (*it >= 0 && *it < static_cast<int64_t>(dims.size()) && dims[*it] == 1)
        dims.erase(dims.begin() + *it);
  } else {
    for (int64_t a : axes) dims.insert(dims.begin() + std::min<int64_t>(a, dims.size()), 1);
  }
  x->shape = Shape(dims);
  return x;
}

std::optional<Values> concat(ImportContext& c, const ImportNode& n) {
  Values out;
  out.integral = true;
  for (int k = 0; k < n.proto.input_size(); ++k) {
    auto x = values_of(c, n.input(k));
    if (!x || x->shape.ndim() != 1) return std::nullopt;
    out.integral = out.integral && x->integral;
    out.v.insert(out.v.end(), x->v.begin(), x->v.end());
  }
  out.shape = Shape{static_cast<int64_t>(out.v.size())};
  return out;
}

// ONNX Expand: numpy broadcasting of the data against the shape.
std::optional<Values> expand(ImportContext& c, const ImportNode& n) {
  auto x = values_of(c, n.input(0)), target = values_of(c, n.input(1));
  if (!x || !target) return std::nullopt;
  std::vector<int64_t> in = x->shape.to_vector(), want(target->v.begin(), target->v.end());
  const size_t rank = std::max(in.size(), want.size());
  in.insert(in.begin(), rank - in.size(), 1);
  want.insert(want.begin(), rank - want.size(), 1);
  std::vector<int64_t> out_dims(rank);
  int64_t total = 1;
  for (size_t i = 0; i < rank; ++i) {
    if (in[i] != want[i] && in[i] != 1 && want[i] != 1)
      throw InputError(str("Expand of ", x->shape.to_string(), " to ", Shape(want).to_string()));
    out_dims[i] = std::max(in[i], want[i]);
    total *= out_dims[i];
  }
  if (total > kMaxFolded) return std::nullopt;
  Values out{Shape(out_dims), std::vector<double>(static_cast<size_t>(total)), x->integral};
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t rest = flat, src = 0, stride = 1;
    for (size_t i = rank; i-- > 0;) {
      const int64_t coord = rest % out_dims[i];
      rest /= out_dims[i];
      src += (in[i] == 1 ? 0 : coord) * stride;
      stride *= in[i];
    }
    out.v[static_cast<size_t>(flat)] = x->v[static_cast<size_t>(src)];
  }
  return out;
}

std::optional<Values> cast(ImportContext& c, const ImportNode& n) {
  auto x = values_of(c, n.input(0));
  if (!x) return std::nullopt;
  const auto to = static_cast<::onnx::TensorProto::DataType>(n.i("to", 0));
  if (to == ::onnx::TensorProto::FLOAT) {
    x->integral = false;
  } else if (to == ::onnx::TensorProto::INT64 || to == ::onnx::TensorProto::INT32) {
    for (double& v : x->v) v = static_cast<double>(static_cast<int64_t>(v));
    x->integral = true;
  } else {
    return std::nullopt;
  }
  return x;
}

}  // namespace

bool fold_constant(ImportContext& c, const ImportNode& n) {
  const std::string& op = n.proto.op_type();
  std::optional<Values> out;
  if (op == "Shape")
    out = shape_of(c, n);
  else if (op == "Gather")
    out = gather(c, n);
  else if (op == "Unsqueeze")
    out = unsqueeze(c, n, false);
  else if (op == "Squeeze")
    out = unsqueeze(c, n, true);
  else if (op == "Concat")
    out = concat(c, n);
  else if (op == "Expand")
    out = expand(c, n);
  else if (op == "Cast")
    out = cast(c, n);
  if (!out || n.proto.output_size() != 1) return false;
  c.constants[n.proto.output(0)] = to_array(*out);
  return true;
}

}  // namespace mx::onnx
