#include "op/infer_util.h"

namespace mx::op {

void assign_shape(Shape& target, const Shape& value, const std::string& what) {
  if (!value.rank_known()) return;
  if (!target.rank_known()) {
    target = value;
    return;
  }
  if (target.ndim() != value.ndim())
    throw ShapeError(
        str(what, ": shape ", target.to_string(), " conflicts with ", value.to_string()));
  Shape merged = target;
  for (int i = 0; i < target.ndim(); ++i) {
    if (value[i] < 0) continue;
    if (merged[i] < 0)
      merged[i] = value[i];
    else if (merged[i] != value[i])
      throw ShapeError(
          str(what, ": shape ", target.to_string(), " conflicts with ", value.to_string()));
  }
  target = merged;
}

void assign_type(std::optional<DType>& target, std::optional<DType> value,
                 const std::string& what) {
  if (!value) return;
  if (!target) {
    target = value;
    return;
  }
  if (*target != *value)
    throw InputError(
        str(what, ": dtype ", dtype_name(*target), " conflicts with ", dtype_name(*value)));
}

std::string input_label(const std::vector<std::string>& names, size_t index) {
  if (index < names.size()) return "input '" + names[index] + "'";
  return "input " + std::to_string(index);
}

bool all_known(const ShapeVector& shapes) {
  for (const auto& s : shapes)
    if (!s.is_known()) return false;
  return true;
}

void infer_same_shape(ShapeVector& in, ShapeVector& out) {
  Shape common;
  for (size_t i = 0; i < in.size(); ++i) assign_shape(common, in[i], "input " + std::to_string(i));
  for (size_t i = 0; i < out.size(); ++i)
    assign_shape(common, out[i], "output " + std::to_string(i));
  for (size_t i = 0; i < in.size(); ++i) assign_shape(in[i], common, "input " + std::to_string(i));
  for (auto& s : out) s = common;
}

void require_ndim(const Shape& shape, int ndim, const std::string& what) {
  if (shape.rank_known() && shape.ndim() != ndim)
    throw ShapeError(
        str(what, " must have ", ndim, " dimensions, but has shape ", shape.to_string()));
}

void infer_same_type(DTypeVector& in, DTypeVector& aux, DTypeVector& out,
                     const std::vector<std::string>& in_names) {
  std::optional<DType> common;
  for (size_t i = 0; i < in.size(); ++i) assign_type(common, in[i], input_label(in_names, i));
  for (size_t i = 0; i < aux.size(); ++i)
    assign_type(common, aux[i], "auxiliary state " + std::to_string(i));
  for (size_t i = 0; i < out.size(); ++i)
    assign_type(common, out[i], "output " + std::to_string(i));
  if (!common) return;
  for (auto& t : in) t = common;
  for (auto& t : aux) t = common;
  for (auto& t : out) t = common;
}

}  // namespace mx::op
