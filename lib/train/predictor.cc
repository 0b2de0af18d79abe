#include "train/predictor.h"

#include <filesystem>

#include "base/error.h"
#include "base/strings.h"
#include "ndarray/params_io.h"

namespace mx::train {
namespace fs = std::filesystem;

Predictor::Predictor(const std::string& model, std::optional<int> epoch, Context ctx) : ctx_(ctx) {
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
  // The input is the argument the checkpoint does not hold and that is not a label.
  std::vector<std::string> inputs;
  for (const auto& a : symbol_.list_arguments())
    if (!params_.count(a) && !(a.size() > 6 && a.compare(a.size() - 6, 6, "_label") == 0))
      inputs.push_back(a);
  if (inputs.size() != 1)
    throw InputError(str(paths_.params(), " and ", paths_.symbol(),
                         ": expected one input without weights, found ", inputs.size(), " (",
                         join(inputs, ", "), "); the checkpoint does not match the symbol"));
  data_name_ = inputs[0];
}

std::optional<std::string> Predictor::run_config() const {
  fs::path p = fs::path(run_dir_.empty() ? "." : run_dir_) / "config.yaml";
  if (fs::exists(p)) return p.string();
  return std::nullopt;
}

void Predictor::bind(const Shape& data_shape) {
  BindOptions options;
  options.ctx = ctx_;
  options.for_training = false;
  auto inferred = symbol_.infer_shape({{data_name_, data_shape}});
  const auto args = symbol_.list_arguments();
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
  const auto aux_names = symbol_.list_auxiliary_states();
  for (size_t i = 0; i < aux_names.size(); ++i) {
    auto it = params_.find(aux_names[i]);
    if (it == params_.end())
      problems.push_back(aux_names[i] + " is missing from the checkpoint");
    else
      aux[aux_names[i]] = it->second;
  }
  if (!problems.empty())
    throw InputError(paths_.params() + " does not match " + paths_.symbol() + ": " +
                     join(problems, "; "));
  exe_ =
      std::make_unique<Executor>(symbol_, arrays, std::map<std::string, NDArray>{}, aux, options);
}

NDArray Predictor::predict(const NDArray& batch) {
  if (!exe_ || exe_->arg_dict().at(data_name_).shape() != batch.shape()) bind(batch.shape());
  NDArray input = exe_->arg_dict().at(data_name_);
  batch.copy_to(input);
  exe_->forward(false);
  return exe_->outputs()[0].copy();
}

}  // namespace mx::train
