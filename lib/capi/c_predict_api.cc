// The C prediction API (include/mx/c_predict_api.h): argument checks and
// handle conversions around capi::ApiPredictor and capi::NDList. Handles are
// the only raw owning pointers: a unique_ptr is released into the handle
// when it goes to C and taken back by the Free call.
#include "mx/c_predict_api.h"

#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "base/error.h"
#include "capi/api_predictor.h"
#include "capi/c_api_error.h"
#include "capi/nd_list.h"

using mx::InputError;
using mx::str;
using mx::capi::ApiPredictor;
using mx::capi::guarded;
using mx::capi::NDList;

// The handles' shape buffers are handed out as mx_uint*.
static_assert(std::is_same_v<mx_uint, uint32_t>);

namespace {

void require(bool ok, const char* what) {
  if (!ok) throw InputError(what);
}

mx::Context device(int dev_type, int dev_id) {
  if (dev_id < 0) throw InputError(str("dev_id ", dev_id, " is negative"));
  if (dev_type == 1) return mx::Context::cpu(dev_id);
  if (dev_type == 2) return mx::Context::gpu(dev_id);
  throw InputError(str("dev_type ", dev_type, " is not 1 (cpu) or 2 (gpu)"));
}

// Input i's shape is data[indptr[i]] .. data[indptr[i + 1] - 1].
mx::capi::InputShapes input_shapes(mx_uint count, const char** keys, const mx_uint* indptr,
                                   const mx_uint* data) {
  mx::capi::InputShapes out;
  if (count == 0) return out;
  require(keys != nullptr, "input_keys is NULL");
  require(indptr != nullptr, "input_shape_indptr is NULL");
  require(data != nullptr || indptr[count] == indptr[0], "input_shape_data is NULL");
  for (mx_uint i = 0; i < count; ++i) {
    require(keys[i] != nullptr, "an input key is NULL");
    if (indptr[i + 1] < indptr[i])
      throw InputError(str("input_shape_indptr decreases at ", i + 1, " (", indptr[i], " then ",
                           indptr[i + 1], ")"));
    std::vector<int64_t> dims(data + indptr[i], data + indptr[i + 1]);
    out.emplace_back(keys[i], mx::Shape(dims));
  }
  return out;
}

std::span<const char> byte_span(const void* bytes, int size, const char* name) {
  if (size < 0) throw InputError(str(name, " size ", size, " is negative"));
  require(bytes != nullptr || size == 0, "the bytes are NULL");
  return {static_cast<const char*>(bytes), static_cast<size_t>(size)};
}

std::vector<std::string> strings(mx_uint count, const char** items, const char* name) {
  std::vector<std::string> out;
  if (count > 0 && items == nullptr) throw InputError(str(name, " is NULL"));
  for (mx_uint i = 0; i < count; ++i) {
    if (items[i] == nullptr) throw InputError(str(name, "[", i, "] is NULL"));
    out.emplace_back(items[i]);
  }
  return out;
}

// Everything but the outputs, the types and the count.
mx::capi::PredictorSpec make_spec(const char* symbol_json, const void* param_bytes, int param_size,
                                  int dev_type, int dev_id, mx_uint num_inputs,
                                  const char** input_keys, const mx_uint* indptr,
                                  const mx_uint* shape_data) {
  require(symbol_json != nullptr, "symbol_json_str is NULL");
  mx::capi::PredictorSpec spec;
  spec.symbol_json = symbol_json;
  spec.params = byte_span(param_bytes, param_size, "param");
  spec.ctx = device(dev_type, dev_id);
  spec.inputs = input_shapes(num_inputs, input_keys, indptr, shape_data);
  return spec;
}

// Makes `count` predictors and hands them to C only when all were made.
void create_into(const mx::capi::PredictorSpec& spec, int count, PredictorHandle* out) {
  require(out != nullptr, "out is NULL");
  auto made = ApiPredictor::create(spec, count);
  for (int i = 0; i < count; ++i) out[i] = made[static_cast<size_t>(i)].release();
}

ApiPredictor& predictor(PredictorHandle handle) {
  require(handle != nullptr, "the predictor handle is NULL");
  return *static_cast<ApiPredictor*>(handle);
}

}  // namespace

int MXPredCreate(const char* symbol_json_str, const void* param_bytes, int param_size, int dev_type,
                 int dev_id, mx_uint num_input_nodes, const char** input_keys,
                 const mx_uint* input_shape_indptr, const mx_uint* input_shape_data,
                 PredictorHandle* out) {
  return guarded("MXPredCreate", [&] {
    create_into(make_spec(symbol_json_str, param_bytes, param_size, dev_type, dev_id,
                          num_input_nodes, input_keys, input_shape_indptr, input_shape_data),
                1, out);
  });
}

int MXPredCreateEx(const char* symbol_json_str, const void* param_bytes, int param_size,
                   int dev_type, int dev_id, mx_uint num_input_nodes, const char** input_keys,
                   const mx_uint* input_shape_indptr, const mx_uint* input_shape_data,
                   const mx_uint num_provided_arg_dtypes, const char** provided_arg_dtype_names,
                   const int* provided_arg_dtypes, PredictorHandle* out) {
  return guarded("MXPredCreateEx", [&] {
    auto spec = make_spec(symbol_json_str, param_bytes, param_size, dev_type, dev_id,
                          num_input_nodes, input_keys, input_shape_indptr, input_shape_data);
    auto names =
        strings(num_provided_arg_dtypes, provided_arg_dtype_names, "provided_arg_dtype_names");
    require(num_provided_arg_dtypes == 0 || provided_arg_dtypes != nullptr,
            "provided_arg_dtypes is NULL");
    for (mx_uint i = 0; i < num_provided_arg_dtypes; ++i) {
      if (!mx::is_valid_dtype_flag(provided_arg_dtypes[i]))
        throw InputError(str("the type of '", names[i], "' is ", provided_arg_dtypes[i],
                             ", not a type flag (0 float32, 1 float64, 2 float16, 3 uint8, ",
                             "4 int32, 5 int8, 6 int64)"));
      spec.dtypes[names[i]] = static_cast<mx::DType>(provided_arg_dtypes[i]);
    }
    create_into(spec, 1, out);
  });
}

int MXPredCreatePartialOut(const char* symbol_json_str, const void* param_bytes, int param_size,
                           int dev_type, int dev_id, mx_uint num_input_nodes,
                           const char** input_keys, const mx_uint* input_shape_indptr,
                           const mx_uint* input_shape_data, mx_uint num_output_nodes,
                           const char** output_keys, PredictorHandle* out) {
  return guarded("MXPredCreatePartialOut", [&] {
    auto spec = make_spec(symbol_json_str, param_bytes, param_size, dev_type, dev_id,
                          num_input_nodes, input_keys, input_shape_indptr, input_shape_data);
    spec.output_keys = strings(num_output_nodes, output_keys, "output_keys");
    create_into(spec, 1, out);
  });
}

int MXPredCreateMultiThread(const char* symbol_json_str, const void* param_bytes, int param_size,
                            int dev_type, int dev_id, mx_uint num_input_nodes,
                            const char** input_keys, const mx_uint* input_shape_indptr,
                            const mx_uint* input_shape_data, int num_threads,
                            PredictorHandle* out) {
  return guarded("MXPredCreateMultiThread", [&] {
    create_into(make_spec(symbol_json_str, param_bytes, param_size, dev_type, dev_id,
                          num_input_nodes, input_keys, input_shape_indptr, input_shape_data),
                num_threads, out);
  });
}

int MXPredReshape(mx_uint num_input_nodes, const char** input_keys,
                  const mx_uint* input_shape_indptr, const mx_uint* input_shape_data,
                  PredictorHandle handle, PredictorHandle* out) {
  return guarded("MXPredReshape", [&] {
    require(out != nullptr, "out is NULL");
    auto shapes = input_shapes(num_input_nodes, input_keys, input_shape_indptr, input_shape_data);
    *out = predictor(handle).reshape(shapes).release();
  });
}

int MXPredGetOutputShape(PredictorHandle handle, mx_uint index, mx_uint** shape_data,
                         mx_uint* shape_ndim) {
  return guarded("MXPredGetOutputShape", [&] {
    require(shape_data != nullptr && shape_ndim != nullptr, "shape_data or shape_ndim is NULL");
    std::vector<mx_uint>& shape = predictor(handle).output_shape(index);
    *shape_data = shape.data();
    *shape_ndim = static_cast<mx_uint>(shape.size());
  });
}

int MXPredGetOutputType(PredictorHandle handle, mx_uint out_index, int* out_dtype) {
  return guarded("MXPredGetOutputType", [&] {
    require(out_dtype != nullptr, "out_dtype is NULL");
    *out_dtype = static_cast<int>(predictor(handle).output_dtype(out_index));
  });
}

int MXPredSetInput(PredictorHandle handle, const char* key, const mx_float* data, mx_uint size) {
  return guarded("MXPredSetInput", [&] {
    require(key != nullptr, "key is NULL");
    require(data != nullptr || size == 0, "data is NULL");
    predictor(handle).set_input(key, data, size);
  });
}

int MXPredForward(PredictorHandle handle) {
  return guarded("MXPredForward", [&] { predictor(handle).forward(); });
}

int MXPredPartialForward(PredictorHandle handle, int step, int* step_left) {
  return guarded("MXPredPartialForward", [&] {
    require(step_left != nullptr, "step_left is NULL");
    if (step < 0) throw InputError(str("step ", step, " is negative"));
    // The whole network is step 0.
    if (step == 0) predictor(handle).forward();
    *step_left = 0;
  });
}

int MXPredGetOutput(PredictorHandle handle, mx_uint index, mx_float* data, mx_uint size) {
  return guarded("MXPredGetOutput", [&] {
    require(data != nullptr || size == 0, "data is NULL");
    predictor(handle).get_output(index, data, size);
  });
}

int MXPredFree(PredictorHandle handle) {
  return guarded("MXPredFree", [&] {
    std::unique_ptr<ApiPredictor> owned(static_cast<ApiPredictor*>(handle));  // deleted here
  });
}

int MXNDListCreate(const char* nd_file_bytes, int nd_file_size, NDListHandle* out,
                   mx_uint* out_length) {
  return guarded("MXNDListCreate", [&] {
    require(out != nullptr && out_length != nullptr, "out or out_length is NULL");
    auto list =
        std::make_unique<NDList>(NDList::read(byte_span(nd_file_bytes, nd_file_size, "nd")));
    *out_length = static_cast<mx_uint>(list->items.size());
    *out = list.release();
  });
}

int MXNDListGet(NDListHandle handle, mx_uint index, const char** out_key, const mx_float** out_data,
                const mx_uint** out_shape, mx_uint* out_ndim) {
  return guarded("MXNDListGet", [&] {
    require(handle != nullptr, "the list handle is NULL");
    require(out_key && out_data && out_shape && out_ndim, "an output pointer is NULL");
    const NDList::Item& item = static_cast<const NDList*>(handle)->at(index);
    *out_key = item.key.c_str();
    *out_data = item.values.data();
    *out_shape = item.shape.data();
    *out_ndim = static_cast<mx_uint>(item.shape.size());
  });
}

int MXNDListFree(NDListHandle handle) {
  return guarded("MXNDListFree", [&] {
    std::unique_ptr<NDList> owned(static_cast<NDList*>(handle));  // deleted here
  });
}
