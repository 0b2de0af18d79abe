#include "onnx/import_util.h"

#include <cstdio>

#include "base/strings.h"

namespace mx::onnx {
using graph::Symbol;

std::string tuple(const std::vector<int64_t>& v) {
  std::vector<std::string> parts;
  for (int64_t x : v) parts.push_back(std::to_string(x));
  return v.size() == 1 ? "(" + parts[0] + ",)" : "(" + join(parts, ", ") + ")";
}
std::string number(double v) {
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}
const char* boolean(bool v) { return v ? "True" : "False"; }

// The values of a constant integer tensor (shapes, axes).
std::vector<int64_t> int_values(const NDArray& a) {
  a.wait_to_read();
  std::vector<int64_t> out;
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(a.raw_data());
    for (int64_t i = 0; i < a.size(); ++i) out.push_back(static_cast<int64_t>(p[i]));
  });
  return out;
}
double scalar_value(const NDArray& a) {
  a.wait_to_read();
  double out = 0;
  dispatch_dtype(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    out = static_cast<double>(static_cast<const T*>(a.raw_data())[0]);
  });
  return out;
}

// An input that must be a constant (initializer, Constant or fixed input).
const NDArray& need_constant(ImportContext& c, const ImportNode& n, int k, const char* what) {
  const NDArray* a = c.constant(n.input(k));
  if (!a) unsupported(str(what, " (input ", k, " '", n.input(k), "') must be a constant"));
  return *a;
}

int64_t positive(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    unsupported(str("axis ", axis, " is out of range for rank ", rank));
  return axis < 0 ? axis + rank : axis;
}

Symbol reshape(ImportContext& c, const std::string& name, const std::vector<int64_t>& codes,
               const Symbol& in) {
  return c.op("Reshape", name, {{"shape", tuple(codes)}}, {in});
}

}  // namespace mx::onnx
