// The C API's shape and type inference of a symbol (include/mx/c_api.h):
// MXNet's argument layout around graph::Symbol::infer_shape / infer_type.
#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "mx/c_api.h"

using mx::InputError;
using mx::str;
using mx::graph::Symbol;
using namespace mx::capi;

namespace {

const Symbol& symbol_of(SymbolHandle h) { return handle_cast<ApiSymbol>(h, "sym").composed("sym"); }

// The names the given values belong to: keys, or the first arguments.
std::vector<std::string> given_names(const Symbol& s, mx_uint num_args, const char** keys) {
  if (keys != nullptr) return strings(num_args, keys, "keys");
  std::vector<std::string> args = s.list_arguments();
  if (num_args > args.size())
    throw InputError(
        str(num_args, " values given by position, but the symbol has ", args.size(), " arguments"));
  args.resize(num_args);
  return args;
}

template <typename Dim>
mx::graph::ShapeMap given_shapes(const Symbol& s, mx_uint num_args, const char** keys,
                                 const mx_uint* ind_ptr, const Dim* data) {
  const auto names = given_names(s, num_args, keys);
  mx::graph::ShapeMap shapes;
  if (num_args == 0) return shapes;
  require(ind_ptr != nullptr, "arg_ind_ptr is NULL");
  require(data != nullptr || ind_ptr[num_args] == ind_ptr[0], "arg_shape_data is NULL");
  for (mx_uint i = 0; i < num_args; ++i) {
    if (ind_ptr[i + 1] < ind_ptr[i])
      throw InputError(
          str("arg_ind_ptr decreases at ", i + 1, " (", ind_ptr[i], " then ", ind_ptr[i + 1], ")"));
    std::vector<int64_t> dims(data + ind_ptr[i], data + ind_ptr[i + 1]);
    shapes[names[i]] = mx::Shape(dims);
  }
  return shapes;
}

template <typename Dim>
struct ShapeReturn {
  ReturnShapes<Dim> in, out, aux;
};

template <typename Dim>
void infer_shapes(SymbolHandle sym, mx_uint num_args, const char** keys, const mx_uint* ind_ptr,
                  const Dim* data, ShapeReturn<Dim>& ret, bool numpy_unknown, mx_uint* sizes[3],
                  const Dim** ndims[3], const Dim*** datas[3], int* complete) {
  for (int k = 0; k < 3; ++k)
    require(sizes[k] && ndims[k] && datas[k], "an output pointer is NULL");
  require(complete != nullptr, "complete is NULL");
  const Symbol& s = symbol_of(sym);
  const auto result = s.infer_shape(given_shapes(s, num_args, keys, ind_ptr, data));
  ret.in.set(result.arguments, numpy_unknown);
  ret.out.set(result.outputs, numpy_unknown);
  ret.aux.set(result.aux, numpy_unknown);
  ReturnShapes<Dim>* lists[3] = {&ret.in, &ret.out, &ret.aux};
  for (int k = 0; k < 3; ++k) {
    *sizes[k] = static_cast<mx_uint>(lists[k]->ndim.size());
    *ndims[k] = lists[k]->ndim.data();
    *datas[k] = lists[k]->data.data();
  }
  *complete = result.complete ? 1 : 0;
}

}  // namespace

int MXSymbolInferShape(SymbolHandle sym, mx_uint num_args, const char** keys,
                       const mx_uint* arg_ind_ptr, const mx_uint* arg_shape_data,
                       mx_uint* in_shape_size, const mx_uint** in_shape_ndim,
                       const mx_uint*** in_shape_data, mx_uint* out_shape_size,
                       const mx_uint** out_shape_ndim, const mx_uint*** out_shape_data,
                       mx_uint* aux_shape_size, const mx_uint** aux_shape_ndim,
                       const mx_uint*** aux_shape_data, int* complete) {
  return guarded("MXSymbolInferShape", [&] {
    thread_local ShapeReturn<uint32_t> ret;
    mx_uint* sizes[3] = {in_shape_size, out_shape_size, aux_shape_size};
    const mx_uint** ndims[3] = {in_shape_ndim, out_shape_ndim, aux_shape_ndim};
    const mx_uint*** datas[3] = {in_shape_data, out_shape_data, aux_shape_data};
    infer_shapes<uint32_t>(sym, num_args, keys, arg_ind_ptr, arg_shape_data, ret, false, sizes,
                           ndims, datas, complete);
  });
}

int MXSymbolInferShapeEx(SymbolHandle sym, mx_uint num_args, const char** keys,
                         const mx_uint* arg_ind_ptr, const int* arg_shape_data,
                         mx_uint* in_shape_size, const int** in_shape_ndim,
                         const int*** in_shape_data, mx_uint* out_shape_size,
                         const int** out_shape_ndim, const int*** out_shape_data,
                         mx_uint* aux_shape_size, const int** aux_shape_ndim,
                         const int*** aux_shape_data, int* complete) {
  return guarded("MXSymbolInferShapeEx", [&] {
    thread_local ShapeReturn<int> ret;
    mx_uint* sizes[3] = {in_shape_size, out_shape_size, aux_shape_size};
    const int** ndims[3] = {in_shape_ndim, out_shape_ndim, aux_shape_ndim};
    const int*** datas[3] = {in_shape_data, out_shape_data, aux_shape_data};
    infer_shapes<int>(sym, num_args, keys, arg_ind_ptr, arg_shape_data, ret, true, sizes, ndims,
                      datas, complete);
  });
}

int MXSymbolInferType(SymbolHandle sym, mx_uint num_args, const char** keys,
                      const int* arg_type_data, mx_uint* in_type_size, const int** in_type_data,
                      mx_uint* out_type_size, const int** out_type_data, mx_uint* aux_type_size,
                      const int** aux_type_data, int* complete) {
  return guarded("MXSymbolInferType", [&] {
    require(in_type_size && in_type_data && out_type_size && out_type_data && aux_type_size &&
                aux_type_data && complete,
            "an output pointer is NULL");
    const Symbol& s = symbol_of(sym);
    const auto names = given_names(s, num_args, keys);
    require(num_args == 0 || arg_type_data != nullptr, "arg_type_data is NULL");
    mx::graph::DTypeMap types;
    for (mx_uint i = 0; i < num_args; ++i)
      types[names[i]] =
          dtype_from_flag(arg_type_data[i], str("the type of '", names[i], "' is").c_str());
    const auto result = s.infer_type(types);
    thread_local std::vector<int> in, out, aux;
    auto flags = [](const std::vector<std::optional<mx::DType>>& list, std::vector<int>& into) {
      into.clear();
      for (const auto& t : list) into.push_back(t ? static_cast<int>(*t) : -1);
    };
    flags(result.arguments, in);
    flags(result.outputs, out);
    flags(result.aux, aux);
    *in_type_size = static_cast<mx_uint>(in.size());
    *in_type_data = in.data();
    *out_type_size = static_cast<mx_uint>(out.size());
    *out_type_data = out.data();
    *aux_type_size = static_cast<mx_uint>(aux.size());
    *aux_type_data = aux.data();
    *complete = result.complete ? 1 : 0;
  });
}
