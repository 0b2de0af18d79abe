// The C API's autograd functions (include/mx/c_api.h) over lib/autograd.
#include <memory>

#include "autograd/backward.h"
#include "autograd/mode.h"
#include "autograd/record.h"
#include "capi/c_api_error.h"
#include "capi/c_api_util.h"
#include "mx/c_api.h"

using mx::InputError;
using mx::str;
using mx::graph::GradReq;
using namespace mx::capi;
namespace autograd = mx::autograd;

namespace {

// MXNet's OpReqType numbers: 0 null, 1 write, 2 write in place, 3 add.
GradReq grad_req_from(mx_uint req, size_t i) {
  switch (req) {
    case 0: return GradReq::kNull;
    case 1:
    case 2: return GradReq::kWrite;
    case 3: return GradReq::kAdd;
    default:
      throw InputError(str("reqs_array[", i, "] is ", req, ", not 0 (null), 1 (write), ",
                           "2 (write in place) or 3 (add)"));
  }
}

std::vector<mx::NDArray> head_gradients(mx_uint num_output, NDArrayHandle* ograd_handles) {
  std::vector<mx::NDArray> out;
  if (ograd_handles == nullptr) return out;  // ones for every head
  for (const auto& a : arrays(num_output, ograd_handles, "ograd_handles", true))
    out.push_back(a.value);
  return out;
}

}  // namespace

int MXAutogradSetIsRecording(int is_recording, int* prev) {
  return guarded("MXAutogradSetIsRecording", [&] {
    require(prev != nullptr, "prev is NULL");
    *prev = autograd::set_recording(is_recording != 0) ? 1 : 0;
  });
}

int MXAutogradSetIsTraining(int is_training, int* prev) {
  return guarded("MXAutogradSetIsTraining", [&] {
    require(prev != nullptr, "prev is NULL");
    *prev = autograd::set_training(is_training != 0) ? 1 : 0;
  });
}

int MXAutogradIsRecording(bool* curr) {
  return guarded("MXAutogradIsRecording", [&] {
    require(curr != nullptr, "curr is NULL");
    *curr = autograd::is_recording();
  });
}

int MXAutogradIsTraining(bool* curr) {
  return guarded("MXAutogradIsTraining", [&] {
    require(curr != nullptr, "curr is NULL");
    *curr = autograd::is_training();
  });
}

int MXAutogradMarkVariables(mx_uint num_var, NDArrayHandle* var_handles, mx_uint* reqs_array,
                            NDArrayHandle* grad_handles) {
  return guarded("MXAutogradMarkVariables", [&] {
    require(num_var == 0 || (var_handles && reqs_array && grad_handles),
            "var_handles, reqs_array or grad_handles is NULL");
    std::vector<autograd::Array*> vars;
    std::vector<mx::NDArray> grads;
    std::vector<GradReq> reqs;
    for (mx_uint i = 0; i < num_var; ++i) {
      const std::string what = str("var_handles[", i, "]");
      vars.push_back(&handle_cast<ApiNDArray>(var_handles[i], what.c_str()).array);
      reqs.push_back(grad_req_from(reqs_array[i], i));
      const std::string gwhat = str("grad_handles[", i, "]");
      if (reqs.back() == GradReq::kNull && grad_handles[i] == nullptr)
        grads.emplace_back();
      else
        grads.push_back(handle_cast<ApiNDArray>(grad_handles[i], gwhat.c_str()).array.value);
    }
    autograd::mark_variables(vars, grads, reqs);
  });
}

int MXAutogradBackward(mx_uint num_output, NDArrayHandle* output_handles,
                       NDArrayHandle* ograd_handles, int retain_graph) {
  return guarded("MXAutogradBackward", [&] {
    const auto heads = arrays(num_output, output_handles, "output_handles");
    autograd::backward(heads, {head_gradients(num_output, ograd_handles), retain_graph != 0});
  });
}

int MXAutogradBackwardEx(mx_uint num_output, NDArrayHandle* output_handles,
                         NDArrayHandle* ograd_handles, mx_uint num_variables,
                         NDArrayHandle* var_handles, int retain_graph, int create_graph,
                         int is_train, NDArrayHandle** grad_handles, int** grad_stypes) {
  return guarded("MXAutogradBackwardEx", [&] {
    (void)is_train;  // each call's backward runs in the mode the call ran in
    if (create_graph != 0)
      throw InputError(
          "create_graph is not supported: mx does not record gradients of "
          "gradients");
    const auto heads = arrays(num_output, output_handles, "output_handles");
    const autograd::BackwardOptions options{head_gradients(num_output, ograd_handles),
                                            retain_graph != 0};
    if (num_variables == 0) {
      autograd::backward(heads, options);
      return;
    }
    require(grad_handles != nullptr, "grad_handles is NULL");
    const auto vars = arrays(num_variables, var_handles, "var_handles");
    auto grads = autograd::gradients(heads, vars, options);
    std::vector<std::unique_ptr<ApiNDArray>> made;
    for (auto& g : grads) made.push_back(std::make_unique<ApiNDArray>(autograd::Array(g)));
    thread_local ReturnHandles ret;
    thread_local std::vector<int> stypes;
    stypes.assign(made.size(), 0);  // dense
    ret.handles.clear();
    ret.handles.reserve(made.size());
    for (auto& h : made) ret.handles.push_back(to_handle(std::move(h)));
    *grad_handles = ret.handles.data();
    if (grad_stypes != nullptr) *grad_stypes = stypes.data();
  });
}
