// Runs an imported ONNX model on the CPU for tests: the graph inputs and
// arrays bound by name, inference mode.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "executor/executor.h"
#include "onnx/import.h"

namespace mx::onnx::testing {

// `values`: arrays for the graph inputs (and anything else to bind by name).
// `fused`: as mx-predict binds, with the inference fusion (oneDNN graphs,
// int8 layers in int8); `stats` then gets what the fused graphs made.
inline std::vector<NDArray> run_imported(const ImportedModel& model,
                                         const std::map<std::string, NDArray>& values,
                                         bool fused = false, op::FusedGraphStats* stats = nullptr) {
  std::map<std::string, NDArray> args, aux;
  BindOptions options;
  options.for_training = false;
  options.fuse_inference = fused;
  auto pick = [&](const std::string& name) -> NDArray {
    if (auto it = values.find(name); it != values.end()) return it->second;
    if (auto it = model.args.find(name); it != model.args.end()) return it->second;
    if (auto it = model.aux.find(name); it != model.aux.end()) return it->second;
    throw InputError("no value for '" + name + "'");
  };
  for (const auto& name : model.symbol.list_arguments()) {
    args[name] = pick(name);
    options.dtypes[name] = args[name].dtype();
  }
  for (const auto& name : model.symbol.list_auxiliary_states()) aux[name] = pick(name);
  Executor exe(model.symbol, args, {}, aux, options);
  if (stats) *stats = exe.fused_stats();
  exe.forward(false);
  std::vector<NDArray> outputs;
  for (const auto& o : exe.outputs()) outputs.push_back(o.copy());
  for (const auto& o : outputs) o.wait_to_read();
  return outputs;
}

}  // namespace mx::onnx::testing
