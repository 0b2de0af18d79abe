// The C API's NDArray functions (include/mx/c_api.h): creation, copies to and
// from host memory, waits, shape and type, views, .params files.
#include <cstring>
#include <memory>

#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "mx/c_api.h"
#include "ndarray/params_io.h"

using mx::InputError;
using mx::NDArray;
using mx::str;
using mx::autograd::Array;
using namespace mx::capi;

namespace {

Array& array_of(NDArrayHandle handle) { return handle_cast<ApiNDArray>(handle, "handle").array; }

// A handle's array, refusing a none array.
const NDArray& values_of(NDArrayHandle handle) {
  const NDArray& a = array_of(handle).value;
  if (a.is_none()) throw InputError("the array is none (it has no shape and no memory)");
  return a;
}

mx::Shape shape_from(const mx_uint* shape, mx_uint ndim) {
  require(shape != nullptr || ndim == 0, "shape is NULL");
  std::vector<int64_t> dims(shape, shape + ndim);
  return mx::Shape(dims);
}

void check_size(const NDArray& a, const void* data, size_t size) {
  require(data != nullptr || size == 0, "data is NULL");
  if (size != static_cast<size_t>(a.size()))
    throw InputError(str("size ", size, " differs from the array's ", a.size(), " elements (",
                         a.describe(), ")"));
}

}  // namespace

int MXNDArrayCreateNone(NDArrayHandle* out) {
  return guarded("MXNDArrayCreateNone", [&] {
    require(out != nullptr, "out is NULL");
    *out = new_array_handle(Array());
  });
}

int MXNDArrayCreate(const mx_uint* shape, mx_uint ndim, int dev_type, int dev_id, int delay_alloc,
                    NDArrayHandle* out) {
  return guarded("MXNDArrayCreate", [&] {
    require(out != nullptr, "out is NULL");
    (void)delay_alloc;  // memory is taken at once
    *out = new_array_handle(Array(NDArray(shape_from(shape, ndim), device(dev_type, dev_id))));
  });
}

int MXNDArrayCreateEx(const mx_uint* shape, mx_uint ndim, int dev_type, int dev_id, int delay_alloc,
                      int dtype, NDArrayHandle* out) {
  return guarded("MXNDArrayCreateEx", [&] {
    require(out != nullptr, "out is NULL");
    (void)delay_alloc;
    const mx::DType type = dtype_from_flag(dtype, "dtype");
    *out =
        new_array_handle(Array(NDArray(shape_from(shape, ndim), device(dev_type, dev_id), type)));
  });
}

int MXNDArrayFree(NDArrayHandle handle) {
  return guarded("MXNDArrayFree", [&] { take_handle<ApiNDArray>(handle, "handle"); });
}

int MXNDArraySyncCopyFromCPU(NDArrayHandle handle, const void* data, size_t size) {
  return guarded("MXNDArraySyncCopyFromCPU", [&] {
    NDArray dst = values_of(handle);
    check_size(dst, data, size);
    // Staged in a fresh host array (no operation can be using it), then
    // copied by the engine after the array's pending operations.
    NDArray staging(dst.shape(), mx::Context::cpu(), dst.dtype());
    if (size > 0) std::memcpy(staging.raw_data(), data, dst.bytes());
    staging.copy_to(dst);
    dst.wait_to_read();
  });
}

int MXNDArraySyncCopyToCPU(NDArrayHandle handle, void* data, size_t size) {
  return guarded("MXNDArraySyncCopyToCPU", [&] {
    const NDArray& src = values_of(handle);
    check_size(src, data, size);
    const NDArray host = src.ctx().is_gpu() ? src.copy_to(mx::Context::cpu()) : src;
    host.wait_to_read();
    if (size > 0) std::memcpy(data, host.raw_data(), host.bytes());
  });
}

int MXNDArrayWaitToRead(NDArrayHandle handle) {
  return guarded("MXNDArrayWaitToRead", [&] { array_of(handle).value.wait_to_read(); });
}

int MXNDArrayWaitToWrite(NDArrayHandle handle) {
  return guarded("MXNDArrayWaitToWrite", [&] {
    const NDArray& a = array_of(handle).value;
    if (a.is_none()) return;
    a.wait_to_read();  // reports a failed write first
    // An empty operation that writes the array runs after its pending reads.
    mx::Engine::get().push([](mx::RunContext) {}, a.ctx(), {}, {a.var()}, mx::FnProperty::kNormal,
                           0, "MXNDArrayWaitToWrite");
    a.wait_to_read();
  });
}

int MXNDArrayWaitAll(void) {
  return guarded("MXNDArrayWaitAll", [] { mx::Engine::get().wait_all(); });
}

int MXNDArrayGetShape(NDArrayHandle handle, mx_uint* out_dim, const mx_uint** out_pdata) {
  return guarded("MXNDArrayGetShape", [&] {
    require(out_dim != nullptr && out_pdata != nullptr, "out_dim or out_pdata is NULL");
    const NDArray& a = array_of(handle).value;
    thread_local ReturnShapes<uint32_t> ret;
    ret.set({a.is_none() ? mx::Shape(std::vector<int64_t>{}) : a.shape()}, false);
    *out_dim = ret.ndim[0];
    *out_pdata = ret.data[0];
  });
}

int MXNDArrayGetShapeEx(NDArrayHandle handle, int* out_dim, const int** out_pdata) {
  return guarded("MXNDArrayGetShapeEx", [&] {
    require(out_dim != nullptr && out_pdata != nullptr, "out_dim or out_pdata is NULL");
    const NDArray& a = array_of(handle).value;
    thread_local ReturnShapes<int> ret;
    ret.set({a.is_none() ? mx::Shape() : a.shape()}, true);
    *out_dim = ret.ndim[0];
    *out_pdata = ret.data[0];
  });
}

int MXNDArrayGetDType(NDArrayHandle handle, int* out_dtype) {
  return guarded("MXNDArrayGetDType", [&] {
    require(out_dtype != nullptr, "out_dtype is NULL");
    *out_dtype = static_cast<int>(array_of(handle).value.dtype());
  });
}

int MXNDArrayGetContext(NDArrayHandle handle, int* out_dev_type, int* out_dev_id) {
  return guarded("MXNDArrayGetContext", [&] {
    require(out_dev_type != nullptr && out_dev_id != nullptr, "out_dev_type or out_dev_id is NULL");
    const NDArray& a = array_of(handle).value;
    const mx::Context ctx = a.is_none() ? mx::Context::cpu() : a.ctx();
    *out_dev_type = device_type_of(ctx);
    *out_dev_id = ctx.id;
  });
}

int MXNDArraySlice(NDArrayHandle handle, mx_uint slice_begin, mx_uint slice_end,
                   NDArrayHandle* out) {
  return guarded("MXNDArraySlice", [&] {
    require(out != nullptr, "out is NULL");
    *out = new_array_handle(Array(values_of(handle).slice(slice_begin, slice_end)));
  });
}

int MXNDArrayAt(NDArrayHandle handle, mx_uint idx, NDArrayHandle* out) {
  return guarded("MXNDArrayAt", [&] {
    require(out != nullptr, "out is NULL");
    *out = new_array_handle(Array(values_of(handle).at(idx)));
  });
}

int MXNDArrayReshape(NDArrayHandle handle, int ndim, int* dims, NDArrayHandle* out) {
  return guarded("MXNDArrayReshape", [&] {
    require(out != nullptr, "out is NULL");
    require(ndim >= 0, "ndim is negative");
    require(dims != nullptr || ndim == 0, "dims is NULL");
    std::vector<int64_t> shape(dims, dims + ndim);
    *out = new_array_handle(Array(values_of(handle).reshape(mx::Shape(shape))));
  });
}

int MXNDArraySave(const char* fname, mx_uint num_args, NDArrayHandle* args, const char** keys) {
  return guarded("MXNDArraySave", [&] {
    require(fname != nullptr, "fname is NULL");
    mx::NamedArrays list;
    if (keys != nullptr) list.names = strings(num_args, keys, "keys");
    for (const Array& a : arrays(num_args, args, "args")) {
      if (a.value.is_none()) throw InputError(str("args[", list.arrays.size(), "] is none"));
      list.arrays.push_back(a.value);
    }
    mx::save_params(fname, list);
  });
}

int MXNDArrayLoad(const char* fname, mx_uint* out_size, NDArrayHandle** out_arr,
                  mx_uint* out_name_size, const char*** out_names) {
  return guarded("MXNDArrayLoad", [&] {
    require(fname != nullptr, "fname is NULL");
    require(out_size && out_arr && out_name_size && out_names, "an output pointer is NULL");
    mx::NamedArrays list = mx::load_params(fname);
    std::vector<std::unique_ptr<ApiNDArray>> made;
    for (const NDArray& a : list.arrays) made.push_back(std::make_unique<ApiNDArray>(Array(a)));
    thread_local ReturnHandles handles;
    thread_local ReturnStrings names;
    *out_names = names.set(list.names);
    handles.handles.clear();
    handles.handles.reserve(made.size());
    for (auto& h : made) handles.handles.push_back(to_handle(std::move(h)));
    *out_name_size = static_cast<mx_uint>(list.names.size());
    *out_arr = handles.handles.data();
    *out_size = static_cast<mx_uint>(handles.handles.size());
  });
}

int MXNDArrayGetGrad(NDArrayHandle handle, NDArrayHandle* out) {
  return guarded("MXNDArrayGetGrad", [&] {
    require(out != nullptr, "out is NULL");
    const Array& a = array_of(handle);
    const bool has = a.entry && a.entry.node->is_variable() &&
                     a.entry.node->grad_req != mx::graph::GradReq::kNull;
    *out = has ? new_array_handle(Array(a.entry.node->grad)) : nullptr;
  });
}

int MXNDArrayDetach(NDArrayHandle handle, NDArrayHandle* out) {
  return guarded("MXNDArrayDetach", [&] {
    require(out != nullptr, "out is NULL");
    *out = new_array_handle(Array(array_of(handle).value));
  });
}
