// The C API's operator functions (include/mx/c_api.h): the registry's
// operators as handles, their descriptions for front ends that generate
// functions, and imperative calls through autograd (which records them when
// this thread records).
#include <memory>
#include <set>

#include "autograd/record.h"
#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "capi/op_handles.h"
#include "capi/op_info.h"
#include "mx/c_api.h"
#include "op/registry.h"

using mx::InputError;
using mx::str;
using mx::op::OpDef;
using namespace mx::capi;

namespace {

// Every name (aliases included, sorted) with its operator, made once: the
// registry never changes after it is built.
struct OpTable {
  std::vector<std::string> names;
  std::vector<const char*> name_pointers;
  std::vector<void*> creators;
  std::set<const void*> known;
  std::map<const OpDef*, OpInfo> infos;
  struct InfoPointers {
    std::vector<const char*> names, types, descriptions;
  };
  std::map<const OpDef*, InfoPointers> info_pointers;
};

const OpTable& op_table() {
  static const OpTable table = [] {
    OpTable t;
    std::map<std::string, const OpDef*> by_name;
    for (const OpDef* def : mx::op::OpRegistry::get().list()) {
      by_name[def->name] = def;
      for (const auto& alias : def->aliases) by_name[alias] = def;
      t.infos[def] = op_info(*def);
    }
    for (const auto& [name, def] : by_name) {
      t.names.push_back(name);
      t.creators.push_back(const_cast<OpDef*>(def));  // C handles are void*; never written
      t.known.insert(def);
    }
    for (const auto& n : t.names) t.name_pointers.push_back(n.c_str());
    for (const auto& [def, info] : t.infos) {
      auto& p = t.info_pointers[def];
      for (const auto& a : info.args) {
        p.names.push_back(a.name.c_str());
        p.types.push_back(a.type.c_str());
        p.descriptions.push_back(a.description.c_str());
      }
    }
    return t;
  }();
  return table;
}

}  // namespace

namespace mx::capi {

const OpDef& op_of(const void* creator) {
  if (creator == nullptr) throw InputError("the operator handle is NULL");
  if (!op_table().known.count(creator))
    throw InputError(
        "the operator handle is not an operator of this library (take one from "
        "NNGetOpHandle or MXSymbolListAtomicSymbolCreators)");
  return *static_cast<const OpDef*>(creator);
}

void add_num_args(const OpDef& def, size_t num_inputs, std::map<std::string, std::string>& params) {
  const std::string& key = op_table().infos.at(&def).key_var_num_args;
  if (!key.empty()) params.emplace(key, std::to_string(num_inputs));
}

}  // namespace mx::capi

int MXListAllOpNames(mx_uint* out_size, const char*** out_array) {
  return guarded("MXListAllOpNames", [&] {
    require(out_size != nullptr && out_array != nullptr, "out_size or out_array is NULL");
    const OpTable& t = op_table();
    *out_size = static_cast<mx_uint>(t.names.size());
    *out_array = const_cast<const char**>(t.name_pointers.data());
  });
}

int NNGetOpHandle(const char* op_name, OpHandle* op_out) {
  return guarded("NNGetOpHandle", [&] {
    require(op_name != nullptr, "op_name is NULL");
    require(op_out != nullptr, "op_out is NULL");
    *op_out = const_cast<OpDef*>(&mx::op::OpRegistry::get().find(op_name));
  });
}

int MXSymbolListAtomicSymbolCreators(mx_uint* out_size, AtomicSymbolCreator** out_array) {
  return guarded("MXSymbolListAtomicSymbolCreators", [&] {
    require(out_size != nullptr && out_array != nullptr, "out_size or out_array is NULL");
    const OpTable& t = op_table();
    *out_size = static_cast<mx_uint>(t.creators.size());
    *out_array = const_cast<AtomicSymbolCreator*>(t.creators.data());
  });
}

int MXSymbolGetAtomicSymbolName(AtomicSymbolCreator creator, const char** name) {
  return guarded("MXSymbolGetAtomicSymbolName", [&] {
    require(name != nullptr, "name is NULL");
    *name = op_of(creator).name.c_str();
  });
}

int MXSymbolGetAtomicSymbolInfo(AtomicSymbolCreator creator, const char** name,
                                const char** description, mx_uint* num_args,
                                const char*** arg_names, const char*** arg_type_infos,
                                const char*** arg_descriptions, const char** key_var_num_args,
                                const char** return_type) {
  return guarded("MXSymbolGetAtomicSymbolInfo", [&] {
    require(name && description && num_args && arg_names && arg_type_infos && arg_descriptions &&
                key_var_num_args,
            "an output pointer is NULL");
    const OpDef& def = op_of(creator);
    const OpTable& t = op_table();
    const OpInfo& info = t.infos.at(&def);
    auto& p = const_cast<OpTable::InfoPointers&>(t.info_pointers.at(&def));
    *name = info.name.c_str();
    *description = info.description.c_str();
    *num_args = static_cast<mx_uint>(info.args.size());
    *arg_names = p.names.data();
    *arg_type_infos = p.types.data();
    *arg_descriptions = p.descriptions.data();
    *key_var_num_args = info.key_var_num_args.c_str();
    if (return_type != nullptr) *return_type = "NDArray-or-Symbol";
  });
}

int MXImperativeInvoke(AtomicSymbolCreator creator, int num_inputs, NDArrayHandle* inputs,
                       int* num_outputs, NDArrayHandle** outputs, int num_params,
                       const char** param_keys, const char** param_vals) {
  return guarded("MXImperativeInvoke", [&] {
    const OpDef& def = op_of(creator);
    require(num_inputs >= 0 && num_params >= 0, "num_inputs or num_params is negative");
    require(num_outputs != nullptr && outputs != nullptr, "num_outputs or outputs is NULL");
    require(*num_outputs >= 0, "*num_outputs is negative");
    const auto in = arrays(static_cast<size_t>(num_inputs), inputs, "inputs");
    auto params = string_pairs(static_cast<size_t>(num_params), param_keys, param_vals);
    add_num_args(def, static_cast<size_t>(num_inputs), params);
    const mx::op::OpInstance op(def.name, params);
    const size_t given = static_cast<size_t>(*num_outputs);
    require(given == 0 || *outputs != nullptr, "*outputs is NULL");
    const auto out = arrays(given, given ? *outputs : nullptr, "outputs");
    std::vector<mx::autograd::Array> result = mx::autograd::invoke(op, in, out);
    if (given > 0) {  // the given handles now hold the outputs' tape entries
      for (size_t k = 0; k < given; ++k)
        handle_cast<ApiNDArray>((*outputs)[k], "outputs").array.entry = result[k].entry;
      return;
    }
    std::vector<std::unique_ptr<ApiNDArray>> made;
    for (auto& r : result) made.push_back(std::make_unique<ApiNDArray>(std::move(r)));
    thread_local ReturnHandles ret;
    ret.handles.clear();
    ret.handles.reserve(made.size());
    for (auto& h : made) ret.handles.push_back(to_handle(std::move(h)));
    *num_outputs = static_cast<int>(ret.handles.size());
    *outputs = ret.handles.data();
  });
}
