// The C API's data iterator functions (include/mx/c_api.h) over lib/io's
// iterators by MXNet's names.
#include <memory>

#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "capi/op_info.h"
#include "io/data_iter_factory.h"
#include "mx/c_api.h"

using mx::InputError;
using mx::str;
using namespace mx::capi;

namespace {

// The iterator types as creators, with their descriptions, made once (the
// list never changes); a creator points at its entry.
struct IterType {
  std::string name, description;
  std::vector<ArgInfo> args;
  std::vector<const char*> names, types, descriptions;
};

const std::vector<IterType>& iter_types() {
  static const std::vector<IterType> types = [] {
    std::vector<IterType> out;
    for (const auto& name : mx::data_iter_types()) {
      const mx::DataIterDescription d = mx::describe_data_iter(name);
      IterType t{name, d.description, {}, {}, {}, {}};
      for (const auto& p : d.params) t.args.push_back(param_arg_info(p));
      out.push_back(std::move(t));
    }
    for (auto& t : out)
      for (const auto& a : t.args) {
        t.names.push_back(a.name.c_str());
        t.types.push_back(a.type.c_str());
        t.descriptions.push_back(a.description.c_str());
      }
    return out;
  }();
  return types;
}

const IterType& iter_type_of(DataIterCreator creator) {
  require(creator != nullptr, "the iterator type (creator) is NULL");
  for (const auto& t : iter_types())
    if (&t == creator) return t;
  throw InputError("the iterator type is not one of MXListDataIters's");
}

ApiDataIter& iter_of(DataIterHandle h) { return handle_cast<ApiDataIter>(h, "handle"); }

const mx::DataBatch& batch_of(DataIterHandle h) {
  ApiDataIter& it = iter_of(h);
  if (!it.batch)
    throw InputError(
        "there is no current batch: call MXDataIterNext first (and check that it "
        "gave 1)");
  return *it.batch;
}

}  // namespace

int MXListDataIters(mx_uint* out_size, DataIterCreator** out_array) {
  return guarded("MXListDataIters", [&] {
    require(out_size != nullptr && out_array != nullptr, "out_size or out_array is NULL");
    static const std::vector<void*> creators = [] {
      std::vector<void*> c;
      for (const auto& t : iter_types()) c.push_back(const_cast<IterType*>(&t));
      return c;
    }();
    *out_size = static_cast<mx_uint>(creators.size());
    *out_array = const_cast<DataIterCreator*>(creators.data());
  });
}

int MXDataIterGetIterInfo(DataIterCreator creator, const char** name, const char** description,
                          mx_uint* num_args, const char*** arg_names, const char*** arg_type_infos,
                          const char*** arg_descriptions) {
  return guarded("MXDataIterGetIterInfo", [&] {
    require(name && description && num_args && arg_names && arg_type_infos && arg_descriptions,
            "an output pointer is NULL");
    auto& t = const_cast<IterType&>(iter_type_of(creator));
    *name = t.name.c_str();
    *description = t.description.c_str();
    *num_args = static_cast<mx_uint>(t.args.size());
    *arg_names = t.names.data();
    *arg_type_infos = t.types.data();
    *arg_descriptions = t.descriptions.data();
  });
}

int MXDataIterCreateIter(DataIterCreator handle, mx_uint num_param, const char** keys,
                         const char** vals, DataIterHandle* out) {
  return guarded("MXDataIterCreateIter", [&] {
    const IterType& type = iter_type_of(handle);
    require(out != nullptr, "out is NULL");
    auto iter = mx::create_data_iter(type.name, string_pairs(num_param, keys, vals), "data");
    *out = to_handle(std::make_unique<ApiDataIter>(std::move(iter)));
  });
}

int MXDataIterFree(DataIterHandle handle) {
  return guarded("MXDataIterFree", [&] { take_handle<ApiDataIter>(handle, "handle"); });
}

int MXDataIterNext(DataIterHandle handle, int* out) {
  return guarded("MXDataIterNext", [&] {
    require(out != nullptr, "out is NULL");
    ApiDataIter& it = iter_of(handle);
    it.batch = it.iter->next();
    *out = it.batch ? 1 : 0;
  });
}

int MXDataIterBeforeFirst(DataIterHandle handle) {
  return guarded("MXDataIterBeforeFirst", [&] {
    ApiDataIter& it = iter_of(handle);
    it.batch.reset();
    it.iter->reset();
  });
}

int MXDataIterGetData(DataIterHandle handle, NDArrayHandle* out) {
  return guarded("MXDataIterGetData", [&] {
    require(out != nullptr, "out is NULL");
    *out = new_array_handle(mx::autograd::Array(batch_of(handle).data));
  });
}

int MXDataIterGetLabel(DataIterHandle handle, NDArrayHandle* out) {
  return guarded("MXDataIterGetLabel", [&] {
    require(out != nullptr, "out is NULL");
    *out = new_array_handle(mx::autograd::Array(batch_of(handle).label));
  });
}

int MXDataIterGetPadNum(DataIterHandle handle, int* pad) {
  return guarded("MXDataIterGetPadNum", [&] {
    require(pad != nullptr, "pad is NULL");
    *pad = batch_of(handle).pad;
  });
}

int MXDataIterGetIndex(DataIterHandle handle, uint64_t** out_index, uint64_t* out_size) {
  return guarded("MXDataIterGetIndex", [&] {
    require(out_index != nullptr && out_size != nullptr, "out_index or out_size is NULL");
    auto& index = const_cast<std::vector<uint64_t>&>(batch_of(handle).index);
    *out_index = index.data();
    *out_size = index.size();
  });
}
