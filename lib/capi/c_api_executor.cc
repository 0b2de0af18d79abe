// The C API's Executor functions (include/mx/c_api.h): MXNet's bind layout
// (arrays in argument order, grad_req numbers) around mx::Executor.
#include <memory>

#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "mx/c_api.h"

using mx::InputError;
using mx::NDArray;
using mx::str;
using mx::graph::GradReq;
using namespace mx::capi;

namespace {

mx::Executor& executor_of(ExecutorHandle h) { return *handle_cast<ApiExecutor>(h, "handle").exe; }

// One array per name, each on `ctx`.
std::map<std::string, NDArray> bound(const std::vector<std::string>& names, mx_uint len,
                                     NDArrayHandle* handles, const char* what, mx::Context ctx) {
  if (len != names.size())
    throw InputError(
        str(what, ": ", len, " arrays for ", names.size(), " (", mx::join(names, ", "), ")"));
  std::map<std::string, NDArray> out;
  const auto list = arrays(len, handles, what);
  for (size_t i = 0; i < names.size(); ++i) {
    const NDArray& a = list[i].value;
    if (a.is_none()) throw InputError(str(what, "[", i, "] ('", names[i], "') is none"));
    if (a.ctx() != ctx)
      throw InputError(str(what, "[", i, "] ('", names[i], "') is on ", a.ctx().to_string(),
                           ", the executor on ", ctx.to_string()));
    out[names[i]] = a;
  }
  return out;
}

GradReq grad_req_of(mx_uint req, size_t i) {
  switch (req) {
    case 0: return GradReq::kNull;
    case 1:
    case 2: return GradReq::kWrite;
    case 3: return GradReq::kAdd;
    default:
      throw InputError(str("grad_req_type[", i, "] is ", req, ", not 0 (null), 1 (write), ",
                           "2 (write in place) or 3 (add)"));
  }
}

struct Gradients {
  std::map<std::string, NDArray> arrays;
  std::map<std::string, GradReq> reqs;
};

Gradients gradients(const std::vector<std::string>& names, NDArrayHandle* grad_store,
                    const mx_uint* grad_req_type, mx::Context ctx) {
  Gradients g;
  for (size_t i = 0; i < names.size(); ++i) {
    NDArrayHandle h = grad_store ? grad_store[i] : nullptr;
    const GradReq req =
        grad_req_type ? grad_req_of(grad_req_type[i], i) : (h ? GradReq::kWrite : GradReq::kNull);
    if (req == GradReq::kNull) continue;
    if (h == nullptr)
      throw InputError(str("arg_grad_store[", i, "] ('", names[i], "') is NULL, but its ",
                           "grad_req_type is ", grad_req_type[i]));
    const std::string what = str("arg_grad_store[", i, "]");
    const NDArray& a = handle_cast<ApiNDArray>(h, what.c_str()).array.value;
    if (a.ctx() != ctx)
      throw InputError(str(what, " ('", names[i], "') is on ", a.ctx().to_string(),
                           ", the executor on ", ctx.to_string()));
    g.arrays[names[i]] = a;
    g.reqs[names[i]] = req;
  }
  return g;
}

void bind(SymbolHandle symbol_handle, int dev_type, int dev_id, mx_uint len, NDArrayHandle* in_args,
          NDArrayHandle* arg_grad_store, mx_uint* grad_req_type, mx_uint aux_states_len,
          NDArrayHandle* aux_states, ExecutorHandle* out) {
  require(out != nullptr, "out is NULL");
  const auto& symbol =
      handle_cast<ApiSymbol>(symbol_handle, "symbol_handle").composed("symbol_handle");
  const mx::Context ctx = device(dev_type, dev_id);
  const auto args = bound(symbol.list_arguments(), len, in_args, "in_args", ctx);
  const auto aux =
      bound(symbol.list_auxiliary_states(), aux_states_len, aux_states, "aux_states", ctx);
  Gradients g = gradients(symbol.list_arguments(), arg_grad_store, grad_req_type, ctx);
  mx::BindOptions options;
  options.ctx = ctx;
  options.for_training = !g.arrays.empty();
  options.grad_req = g.reqs;
  auto exe = std::make_unique<mx::Executor>(symbol, args, g.arrays, aux, options);
  *out = to_handle(std::make_unique<ApiExecutor>(std::move(exe)));
}

void backward(ExecutorHandle handle, mx_uint len, NDArrayHandle* head_grads) {
  mx::Executor& exe = executor_of(handle);
  std::vector<NDArray> heads;
  if (len > 0) {
    if (len != exe.outputs().size())
      throw InputError(str(len, " head gradients for ", exe.outputs().size(), " outputs"));
    for (const auto& a : arrays(len, head_grads, "head_grads", true)) heads.push_back(a.value);
  }
  exe.backward(heads);
}

}  // namespace

int MXExecutorBind(SymbolHandle symbol_handle, int dev_type, int dev_id, mx_uint len,
                   NDArrayHandle* in_args, NDArrayHandle* arg_grad_store, mx_uint* grad_req_type,
                   mx_uint aux_states_len, NDArrayHandle* aux_states, ExecutorHandle* out) {
  return guarded("MXExecutorBind", [&] {
    bind(symbol_handle, dev_type, dev_id, len, in_args, arg_grad_store, grad_req_type,
         aux_states_len, aux_states, out);
  });
}

int MXExecutorBindEX(SymbolHandle symbol_handle, int dev_type, int dev_id, mx_uint num_map_keys,
                     const char** map_keys, const int* map_dev_types, const int* map_dev_ids,
                     mx_uint len, NDArrayHandle* in_args, NDArrayHandle* arg_grad_store,
                     mx_uint* grad_req_type, mx_uint aux_states_len, NDArrayHandle* aux_states,
                     ExecutorHandle shared_exec, ExecutorHandle* out) {
  return guarded("MXExecutorBindEX", [&] {
    (void)map_keys, (void)map_dev_types, (void)map_dev_ids;
    if (num_map_keys != 0)
      throw InputError("num_map_keys must be 0: mx binds a symbol to one device (no group2ctx)");
    if (shared_exec != nullptr) executor_of(shared_exec);  // checked; its memory is not shared
    bind(symbol_handle, dev_type, dev_id, len, in_args, arg_grad_store, grad_req_type,
         aux_states_len, aux_states, out);
  });
}

int MXExecutorForward(ExecutorHandle handle, int is_train) {
  return guarded("MXExecutorForward", [&] { executor_of(handle).forward(is_train != 0); });
}

int MXExecutorBackward(ExecutorHandle handle, mx_uint len, NDArrayHandle* head_grads) {
  return guarded("MXExecutorBackward", [&] { backward(handle, len, head_grads); });
}

int MXExecutorBackwardEx(ExecutorHandle handle, mx_uint len, NDArrayHandle* head_grads,
                         int is_train) {
  return guarded("MXExecutorBackwardEx", [&] {
    if (is_train == 0)
      throw InputError(
          "is_train 0 is not supported: the backward pass follows a training "
          "forward pass (MXExecutorForward with is_train 1)");
    backward(handle, len, head_grads);
  });
}

int MXExecutorOutputs(ExecutorHandle handle, mx_uint* out_size, NDArrayHandle** out) {
  return guarded("MXExecutorOutputs", [&] {
    require(out_size != nullptr && out != nullptr, "out_size or out is NULL");
    std::vector<std::unique_ptr<ApiNDArray>> made;
    for (const NDArray& a : executor_of(handle).outputs())
      made.push_back(std::make_unique<ApiNDArray>(mx::autograd::Array(a)));
    thread_local ReturnHandles ret;
    ret.handles.clear();
    ret.handles.reserve(made.size());
    for (auto& h : made) ret.handles.push_back(to_handle(std::move(h)));
    *out_size = static_cast<mx_uint>(ret.handles.size());
    *out = ret.handles.data();
  });
}

int MXExecutorFree(ExecutorHandle handle) {
  return guarded("MXExecutorFree", [&] { take_handle<ApiExecutor>(handle, "handle"); });
}
