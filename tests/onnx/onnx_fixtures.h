// What the ONNX tests share: reading a fixture's .pb tensor, comparing
// outputs, and loading an mx or MXNet checkpoint (symbol + .params).
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>

#include "executor/executor.h"
#include "graph/symbol.h"
#include "ndarray/params_io.h"
#include "onnx/model_file.h"
#include "onnx/tensor_proto.h"

namespace mx::onnx::testing {

inline NDArray read_pb(const std::string& path) {
  return tensor_to_array(read_tensor_file(path), path);
}

// |got - want| <= atol + rtol * |want| for every element.
inline void check_close(const NDArray& got, const NDArray& want, const std::string& what,
                        double atol = 1e-4, double rtol = 1e-4) {
  INFO(what);
  REQUIRE(got.shape() == want.shape());
  auto a = got.to_vector<float>(), b = want.to_vector<float>();
  for (size_t i = 0; i < a.size(); ++i) {
    INFO("element ", i, ": ", a[i], " vs ", b[i]);
    REQUIRE(std::fabs(a[i] - b[i]) <= atol + rtol * std::fabs(b[i]));
  }
}

struct Checkpoint {
  graph::Symbol symbol;
  std::map<std::string, NDArray> args, aux;
};

// PREFIX-symbol.json and PREFIX-EPOCH.params (arg:/aux: names).
inline Checkpoint load_checkpoint(const std::string& prefix, const std::string& epoch) {
  Checkpoint c{graph::Symbol::load(prefix + "-symbol.json"), {}, {}};
  NamedArrays p = load_params(prefix + "-" + epoch + ".params");
  for (size_t i = 0; i < p.names.size(); ++i)
    (p.names[i].rfind("aux:", 0) == 0 ? c.aux : c.args)[p.names[i].substr(4)] = p.arrays[i];
  return c;
}

// mx's own forward pass of a checkpoint on `data` (inference; missing
// arguments, the labels, as zeros).
// `fused`: as mx-predict binds, with the inference fusion (oneDNN graphs).
inline NDArray run_checkpoint(const Checkpoint& c, const NDArray& data, bool fused = false) {
  std::map<std::string, NDArray> args = c.args;
  args["data"] = data;
  auto inferred = c.symbol.infer_shape({{"data", data.shape()}});
  auto names = c.symbol.list_arguments();
  for (size_t i = 0; i < names.size(); ++i)
    if (!args.count(names[i])) args[names[i]] = NDArray::zeros(inferred.arguments[i]);  // labels
  BindOptions options;
  options.for_training = false;
  options.fuse_inference = fused;
  Executor exe(c.symbol, args, {}, c.aux, options);
  exe.forward(false);
  return exe.outputs()[0].copy();
}

}  // namespace mx::onnx::testing
