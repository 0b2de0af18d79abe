// The object behind a PredictorHandle of the C prediction API: a symbol
// bound for inference to the weights of a .params file given as bytes, with
// MXNet 1.x's MXPredCreate semantics (input shapes given, outputs optionally
// internal layers). Predictors made together or by reshape share the weights
// (read-only) and nothing else, so each may run on its own thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "base/context.h"
#include "base/dtype.h"
#include "base/shape.h"
#include "executor/executor.h"

namespace mx::capi {

using InputShapes = std::vector<std::pair<std::string, Shape>>;

// What the MXPredCreate functions take, in C++ terms.
struct PredictorSpec {
  std::string symbol_json;
  std::span<const char> params;  // a .params file's bytes
  Context ctx;
  InputShapes inputs;
  std::vector<std::string> output_keys;  // layer names; empty: the network's outputs
  std::map<std::string, DType> dtypes;   // argument types other than float32
};

class ApiPredictor {
 public:
  struct Binding;  // the network and its weights, shared (defined in the .cc)

  // `count` predictors sharing one copy of the weights. Throws InputError
  // for a bad symbol, bad params or shapes the network cannot take.
  static std::vector<std::unique_ptr<ApiPredictor>> create(const PredictorSpec& spec, int count);

  // A predictor for new shapes of (some of) the inputs, sharing the weights;
  // InputError when the new shapes would change a weight's shape.
  std::unique_ptr<ApiPredictor> reshape(const InputShapes& inputs) const;

  // Copies `count` elements of the argument's type from `data` into input
  // `key`; count must equal its size.
  void set_input(const std::string& key, const void* data, uint64_t count);
  // Pushes the forward pass; get_output waits for it.
  void forward() { exe_->forward(false); }

  size_t num_outputs() const { return exe_->outputs().size(); }
  // The shape as mx_uint values, kept until the next call.
  std::vector<uint32_t>& output_shape(size_t index);
  DType output_dtype(size_t index) const { return output(index).dtype(); }
  // Waits for the output and copies its `count` elements (its size) to `data`.
  void get_output(size_t index, void* data, uint64_t count) const;

 private:
  ApiPredictor(std::shared_ptr<const Binding> binding, const graph::ShapeMap& input_shapes);
  const NDArray& output(size_t index) const;

  std::shared_ptr<const Binding> binding_;
  std::unique_ptr<Executor> exe_;
  std::vector<uint32_t> shape_buffer_;
};

}  // namespace mx::capi
