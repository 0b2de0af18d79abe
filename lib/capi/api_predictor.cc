#include "capi/api_predictor.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "base/error.h"
#include "graph/quantize_marks.h"
#include "base/strings.h"
#include "graph/symbol.h"
#include "ndarray/params_io.h"
#include "train/process_threads.h"

namespace mx::capi {

struct ApiPredictor::Binding {
  graph::Symbol symbol;
  std::map<std::string, NDArray> weights, aux;  // from the params, by argument name
  std::set<std::string> inputs;                 // the inputs given at creation
  std::map<std::string, DType> dtypes;          // of inputs and labels, when not float32
  BindOptions options;
};

namespace {

bool is_label(const std::string& name) {
  return name.size() > 6 && name.compare(name.size() - 6, 6, "_label") == 0;
}

// The network with the outputs MXPredCreatePartialOut names: layer "fc1" is
// the internal output "fc1_output", as in MXNet (the full name works too).
graph::Symbol select_outputs(const graph::Symbol& symbol, const std::vector<std::string>& keys) {
  if (keys.empty()) return symbol;
  const graph::Symbol internals = symbol.get_internals();
  const std::vector<std::string> names = internals.list_outputs();
  std::vector<graph::Symbol> chosen;
  for (const std::string& key : keys) {
    auto it = std::find(names.begin(), names.end(), key + "_output");
    if (it == names.end()) it = std::find(names.begin(), names.end(), key);
    if (it == names.end())
      throw InputError(str("output key '", key, "': the network has no output '", key, "_output'",
                           did_you_mean(key + "_output", names)));
    chosen.push_back(internals[static_cast<size_t>(it - names.begin())]);
  }
  return graph::Symbol::group(chosen);
}

// The arrays of a checkpoint's .params by argument name: MXNet writes
// "arg:NAME" and "aux:NAME"; plain names are taken as they are.
std::map<std::string, NDArray> read_weights(std::span<const char> bytes, Context ctx) {
  NamedArrays list = read_params(bytes, "param bytes", ctx);
  if (list.names.empty() && !list.arrays.empty())
    throw InputError(
        "param bytes: the arrays have no names; expected a checkpoint's arg:NAME and aux:NAME "
        "arrays");
  std::map<std::string, NDArray> out;
  for (size_t i = 0; i < list.names.size(); ++i) {
    std::string name = list.names[i];
    if (name.rfind("arg:", 0) == 0 || name.rfind("aux:", 0) == 0) name = name.substr(4);
    out[name] = list.arrays[i];
  }
  return out;
}

std::shared_ptr<ApiPredictor::Binding> make_binding(const PredictorSpec& spec) {
  auto b = std::make_shared<ApiPredictor::Binding>();
  b->symbol = select_outputs(graph::Symbol::from_json(spec.symbol_json), spec.output_keys);
  // A model quantized by mx-quantize runs its int8 layers as mx-predict does.
  graph::check_quantization_marks(b->symbol, "the symbol JSON");
  const std::vector<std::string> args = b->symbol.list_arguments();
  auto check_argument = [&](const std::string& name, const char* what) {
    if (std::find(args.begin(), args.end(), name) == args.end())
      throw InputError(str(what, " '", name, "' is not an argument of the network",
                           did_you_mean(name, args), " (arguments: ", join(args, ", "), ")"));
  };
  for (const auto& [name, shape] : spec.inputs) {
    check_argument(name, "input");
    b->inputs.insert(name);
  }
  std::map<std::string, NDArray> all = read_weights(spec.params, spec.ctx);
  for (const std::string& name : args)
    if (auto it = all.find(name); it != all.end() && !b->inputs.count(name))
      b->weights[name] = it->second;
  for (const std::string& name : b->symbol.list_auxiliary_states())
    if (auto it = all.find(name); it != all.end()) b->aux[name] = it->second;
  for (const auto& [name, dtype] : spec.dtypes) {
    check_argument(name, "the type of");
    if (auto it = b->weights.find(name); it != b->weights.end()) {
      if (it->second.dtype() != dtype)
        throw InputError(str("the type of '", name, "': ", dtype_name(dtype), " was given but the ",
                             "params hold it as ", dtype_name(it->second.dtype())));
    } else {
      b->dtypes[name] = dtype;
    }
  }
  b->options.ctx = spec.ctx;
  b->options.for_training = false;
  // As mx-predict: runs of layers as fused oneDNN graphs on the CPU
  // (MX_DNNL_FUSE=0 turns it off).
  b->options.fuse_inference = true;
  return b;
}

std::string shapes_text(const graph::ShapeMap& shapes) {
  std::vector<std::string> parts;
  for (const auto& [name, shape] : shapes) parts.push_back(name + " " + shape.to_string());
  return join(parts, ", ");
}

}  // namespace

ApiPredictor::ApiPredictor(std::shared_ptr<const Binding> binding,
                           const graph::ShapeMap& input_shapes)
    : binding_(std::move(binding)) {
  const Binding& b = *binding_;
  const auto inferred = b.symbol.infer_shape(input_shapes);
  const auto args = b.symbol.list_arguments();
  std::map<std::string, NDArray> arrays;
  std::vector<std::string> problems;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& name = args[i];
    const Shape& needed = inferred.arguments[i];
    auto type = b.dtypes.find(name);
    const DType dtype = type == b.dtypes.end() ? DType::kFloat32 : type->second;
    if (auto in = input_shapes.find(name); in != input_shapes.end()) {
      arrays[name] = NDArray::zeros(in->second, b.options.ctx, dtype);
    } else if (auto w = b.weights.find(name); w != b.weights.end()) {
      if (needed.is_known() && w->second.shape() != needed)
        problems.push_back(str(name, " is ", w->second.shape().to_string(),
                               " in the params but the network needs ", needed.to_string()));
      arrays[name] = w->second;
    } else if (is_label(name) && needed.is_known()) {
      arrays[name] = NDArray::zeros(needed, b.options.ctx, dtype);  // unused at inference
    } else {
      problems.push_back(name + " is not in the params and not an input");
    }
  }
  const auto aux_names = b.symbol.list_auxiliary_states();
  for (size_t i = 0; i < aux_names.size(); ++i) {
    auto it = b.aux.find(aux_names[i]);
    if (it == b.aux.end())
      problems.push_back(aux_names[i] + " (an auxiliary state) is not in the params");
    else if (inferred.aux[i].is_known() && it->second.shape() != inferred.aux[i])
      problems.push_back(str(aux_names[i], " is ", it->second.shape().to_string(),
                             " in the params but the network needs ", inferred.aux[i].to_string()));
  }
  if (!problems.empty())
    throw InputError(str("the params do not fit the network with input shapes ",
                         shapes_text(input_shapes), ": ", join(problems, "; ")));
  exe_ = std::make_unique<Executor>(b.symbol, arrays, std::map<std::string, NDArray>{}, b.aux,
                                    b.options);
}

std::vector<std::unique_ptr<ApiPredictor>> ApiPredictor::create(const PredictorSpec& spec,
                                                                int count) {
  if (count < 1) throw InputError(str("the number of predictors is ", count, "; it must be >= 1"));
  std::shared_ptr<const Binding> binding = make_binding(spec);
  // The C API stands where a program would: the process's thread choice for
  // inference (one CPU worker on the CPU) is made before predictors are built.
  train::apply_process_threads(train::inference_threads(binding->options.ctx));
  graph::ShapeMap shapes(spec.inputs.begin(), spec.inputs.end());
  std::vector<std::unique_ptr<ApiPredictor>> out;
  for (int i = 0; i < count; ++i)
    out.push_back(std::unique_ptr<ApiPredictor>(new ApiPredictor(binding, shapes)));
  return out;
}

std::unique_ptr<ApiPredictor> ApiPredictor::reshape(const InputShapes& inputs) const {
  graph::ShapeMap shapes;
  for (const std::string& name : binding_->inputs) shapes[name] = exe_->arg_dict().at(name).shape();
  for (const auto& [name, shape] : inputs) {
    if (!binding_->inputs.count(name))
      throw InputError(str("'", name, "' is not an input of this predictor (inputs: ",
                           join({binding_->inputs.begin(), binding_->inputs.end()}, ", "),
                           "); only the inputs' shapes may change"));
    shapes[name] = shape;
  }
  train::apply_process_threads(train::inference_threads(binding_->options.ctx));
  return std::unique_ptr<ApiPredictor>(new ApiPredictor(binding_, shapes));
}

void ApiPredictor::set_input(const std::string& key, const void* data, uint64_t count) {
  const auto& args = exe_->arg_dict();
  auto it = args.find(key);
  if (it == args.end() || binding_->weights.count(key)) {
    std::vector<std::string> settable;
    for (const auto& [name, array] : args)
      if (!binding_->weights.count(name)) settable.push_back(name);
    throw InputError(str("'", key, "' is not an input of the network",
                         it != args.end() ? " (it is a weight from the params)" : "",
                         "; inputs: ", join(settable, ", ")));
  }
  NDArray dst = it->second;
  if (count != static_cast<uint64_t>(dst.size()))
    throw InputError(str("input '", key, "' is ", dst.shape().to_string(), ", ", dst.size(),
                         " elements; ", count, " were given"));
  // A fresh array has no pending operations, so it is filled here; the copy
  // into the input waits for the previous forward pass to stop reading it.
  NDArray staged(dst.shape(), Context::cpu(), dst.dtype());
  std::memcpy(staged.raw_data(), data, staged.bytes());
  staged.copy_to(dst);
}

const NDArray& ApiPredictor::output(size_t index) const {
  const auto& outputs = exe_->outputs();
  if (index >= outputs.size())
    throw InputError(str("output index ", index, " is out of range: the network has ",
                         outputs.size(), " output(s)"));
  return outputs[index];
}

std::vector<uint32_t>& ApiPredictor::output_shape(size_t index) {
  const Shape& shape = output(index).shape();
  shape_buffer_.assign(shape.begin(), shape.end());
  return shape_buffer_;
}

void ApiPredictor::get_output(size_t index, void* data, uint64_t count) const {
  NDArray out = output(index);
  if (count != static_cast<uint64_t>(out.size()))
    throw InputError(str("output ", index, " is ", out.shape().to_string(), ", ", out.size(),
                         " elements; room for ", count, " was given"));
  if (out.ctx().is_gpu()) out = out.copy_to(Context::cpu());
  out.wait_to_read();
  std::memcpy(data, out.raw_data(), out.bytes());
}

}  // namespace mx::capi
