#include "train/predictor.h"

#include <filesystem>

#include "base/error.h"
#include "base/logging.h"
#include "base/strings.h"
#include "graph/quantize_marks.h"
#include "ndarray/params_io.h"
#include "op/dnnl/dnnl_switch.h"
#include "train/carried_states.h"
#if MX_HAVE_ONNX
#include "onnx/import.h"
#endif

namespace mx::train {
namespace fs = std::filesystem;

namespace {

bool is_onnx_file(const std::string& model) {
  const std::string ext = to_lower(fs::path(model).extension().string());
  return ext == ".onnx" && !fs::is_directory(model);
}

// The one argument that has no weights and is not a label or a carried
// recurrent state.
std::string find_data_input(const graph::Symbol& symbol,
                            const std::map<std::string, NDArray>& params,
                            const std::string& source) {
  const std::vector<std::string> carried = CarriedStates(symbol).inputs();
  std::vector<std::string> inputs;
  for (const auto& a : symbol.list_arguments())
    if (!params.count(a) && !(a.size() > 6 && a.compare(a.size() - 6, 6, "_label") == 0) &&
        std::find(carried.begin(), carried.end(), a) == carried.end())
      inputs.push_back(a);
  if (inputs.size() != 1)
    throw InputError(str(source, ": expected one input without weights, found ", inputs.size(),
                         " (", join(inputs, ", "), ")"));
  return inputs[0];
}

}  // namespace

InferencePrecision parse_precision(const std::string& text, const std::string& option) {
  if (text == "fp32") return InferencePrecision::kFloat32;
  if (text == "bf16") return InferencePrecision::kBFloat16;
  throw InputError(option + ": '" + text + "' is not a precision (fp32 or bf16)");
}

Predictor::Predictor(const std::string& model, std::optional<int> epoch, Context ctx,
                     InferencePrecision precision)
    : ctx_(ctx), precision_(precision) {
  if (precision == InferencePrecision::kBFloat16) {
    const char* why = ctx.kind() != DeviceKind::kCPU ? "runs on the CPU only"
                      : !op::dnnl_enabled()
                          ? "needs oneDNN (this build has none, or MX_DNNL=0 turned it off)"
                      : !op::dnnl_bf16_available()
                          ? "needs a CPU with bfloat16 instructions (AVX512-BF16 or AMX); "
                            "this one would emulate them, slower than fp32"
                          : nullptr;
    if (why != nullptr) throw InputError(std::string("bf16 inference ") + why);
  }
  if (is_onnx_file(model)) {
    if (epoch) throw InputError(model + ": --epoch is for checkpoints, not ONNX models");
    load_onnx(model);
  } else {
    load_checkpoint(model, epoch);
  }
  int8_layers_ =
      graph::check_quantization_marks(symbol_, onnx_path_.empty() ? paths_.symbol() : onnx_path_);
  if (int8_layers_ > 0) warn_about_int8();
}

// int8 layers run in int8 where oneDNN runs them, and say so where they cannot.
void Predictor::warn_about_int8() const {
  const std::string what = str(int8_layers_, " int8 layers");
  if (ctx_.kind() != DeviceKind::kCPU) {
    MX_LOG(kWarning) << what << " run in float32: int8 runs on the CPU only";
    return;
  }
  if (!op::dnnl_enabled()) {
    MX_LOG(kWarning) << what
                     << " run in float32: int8 needs oneDNN (this build has none, or MX_DNNL=0)";
    return;
  }
  if (!op::dnnl_int8_fast()) {
    MX_LOG(kWarning) << what
                     << ": oneDNN has no VNNI instructions here (AVX512-VNNI or AVX-VNNI), so its "
                        "int8 kernels run correctly but slower, perhaps slower than float32";
  }
}

void Predictor::load_checkpoint(const std::string& model, std::optional<int> epoch) {
  if (epoch) {
    std::string prefix = model;
    if (fs::is_directory(model)) prefix = (fs::path(model) / "model").string();
    paths_ = {prefix, *epoch};
    if (!fs::exists(paths_.params()))
      throw InputError("checkpoint " + paths_.params() + " does not exist");
  } else {
    paths_ = find_checkpoint(model, "model");
  }
  run_dir_ = fs::path(paths_.prefix).parent_path().string();
  symbol_ = graph::Symbol::load(paths_.symbol());
  NamedArrays list = load_params(paths_.params(), ctx_);
  if (list.names.empty())
    throw InputError(paths_.params() + ": the arrays have no names; not a checkpoint");
  for (size_t i = 0; i < list.names.size(); ++i) {
    std::string name = list.names[i];
    if (name.rfind("arg:", 0) == 0 || name.rfind("aux:", 0) == 0) name = name.substr(4);
    params_[name] = list.arrays[i];
  }
  data_name_ = find_data_input(
      symbol_, params_,
      paths_.params() + " and " + paths_.symbol() + " (the checkpoint does not match the symbol)");
}

void Predictor::load_onnx(const std::string& path) {
#if MX_HAVE_ONNX
  if (!fs::exists(path)) throw InputError(path + " does not exist");
  onnx::ImportedModel imported = onnx::import_model(path);
  for (const auto& warning : imported.warnings) MX_LOG(kWarning) << warning;
  onnx_path_ = path;
  symbol_ = imported.symbol;
  for (const auto& [name, array] : imported.args) params_[name] = array.copy_to(ctx_);
  for (const auto& [name, array] : imported.aux) params_[name] = array.copy_to(ctx_);
  data_name_ = find_data_input(symbol_, params_, path);
  for (const auto& input : imported.inputs) {
    // The batch dimension is usually symbolic; the rest is one example.
    if (input.name != data_name_ || input.shape.ndim() < 2) continue;
    Shape example(std::vector<int64_t>(input.shape.begin() + 1, input.shape.end()));
    if (example.is_known()) stated_example_ = example;
  }
#else
  throw InputError(path +
                   ": this build of mx has no ONNX support (install libonnx-dev and "
                   "libprotobuf-dev, then rebuild)");
#endif
}

std::optional<std::string> Predictor::run_config() const {
  fs::path p = fs::path(run_dir_.empty() ? "." : run_dir_) / "config.yaml";
  if (fs::exists(p)) return p.string();
  return std::nullopt;
}

void Predictor::bind(const Shape& data_shape) {
  // The executor of the last shape goes first: with both alive, peak memory
  // would hold two sets of prepared weights and workspaces.
  exe_.reset();
  exe_ = make_executor(symbol_, data_shape, true);
}

std::unique_ptr<Executor> Predictor::make_executor(const graph::Symbol& symbol,
                                                   const Shape& data_shape, bool fuse) const {
  BindOptions options;
  options.ctx = ctx_;
  options.for_training = false;
  options.fuse_inference = fuse;
  options.bfloat16_inference = fuse && precision_ == InferencePrecision::kBFloat16;
  auto inferred = symbol.infer_shape({{data_name_, data_shape}});
  const auto args = symbol.list_arguments();
  std::map<std::string, NDArray> arrays, aux;
  std::vector<std::string> problems;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& name = args[i];
    if (name == data_name_) {
      arrays[name] = NDArray::zeros(data_shape, ctx_);
    } else if (auto it = params_.find(name); it != params_.end()) {
      if (inferred.arguments[i].is_known() && it->second.shape() != inferred.arguments[i])
        problems.push_back(str(name, " is ", it->second.shape().to_string(),
                               " in the checkpoint but the network needs ",
                               inferred.arguments[i].to_string()));
      arrays[name] = it->second;
    } else if (inferred.arguments[i].is_known()) {
      arrays[name] = NDArray::zeros(inferred.arguments[i], ctx_);  // labels: unused at inference
    } else {
      problems.push_back(name + " is missing from the checkpoint");
    }
  }
  const auto aux_names = symbol.list_auxiliary_states();
  for (size_t i = 0; i < aux_names.size(); ++i) {
    auto it = params_.find(aux_names[i]);
    if (it == params_.end())
      problems.push_back(aux_names[i] + " is missing from the checkpoint");
    else
      aux[aux_names[i]] = it->second;
  }
  if (!problems.empty())
    throw InputError((onnx_path_.empty() ? paths_.params() + " does not match " + paths_.symbol()
                                         : onnx_path_ + " does not fit its own graph") +
                     ": " + join(problems, "; "));
  return std::make_unique<Executor>(symbol, arrays, std::map<std::string, NDArray>{}, aux, options);
}

NDArray Predictor::predict(const NDArray& batch) { return predict_all(batch)[0].copy(); }

const std::vector<NDArray>& Predictor::predict_all(const NDArray& batch) {
  if (!exe_ || exe_->arg_dict().at(data_name_).shape() != batch.shape()) bind(batch.shape());
  NDArray input = exe_->arg_dict().at(data_name_);
  batch.copy_to(input);
  exe_->forward(false);
  return exe_->outputs();
}

std::vector<NDArray> Predictor::internal_values(const NDArray& batch,
                                                const std::vector<graph::NodeEntry>& entries) {
  if (!values_exe_ || !(values_entries_ == entries) ||
      values_exe_->arg_dict().at(data_name_).shape() != batch.shape()) {
    values_exe_.reset();
    values_exe_ = make_executor(graph::Symbol(entries), batch.shape(), false);
    values_entries_ = entries;
  }
  NDArray input = values_exe_->arg_dict().at(data_name_);
  batch.copy_to(input);
  values_exe_->forward(false);
  return values_exe_->outputs();
}

void Predictor::use_symbol(graph::Symbol symbol) {
  symbol_ = std::move(symbol);
  exe_.reset();
  values_exe_.reset();
}

}  // namespace mx::train
