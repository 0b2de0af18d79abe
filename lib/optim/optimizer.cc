#include "optim/optimizer.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "base/error.h"
#include "base/file_util.h"
#include "base/strings.h"
#include "ndarray/params_io.h"
#include "optim/fused_update.h"
#include "optim/optimizers.h"
#include "optim/update_kernels.h"

namespace mx::optim {

namespace detail {

void check_update_arrays(const std::string& optimizer, const NDArray& weight, const NDArray& grad,
                         const std::vector<NDArray>& state, size_t expected_states) {
  const std::string owner = "optimizer '" + optimizer + "'";
  if (weight.is_none() || grad.is_none())
    throw Error(owner + ": weight and gradient must be allocated arrays");
  if (weight.dtype() != DType::kFloat32 && weight.dtype() != DType::kFloat64)
    throw Error(owner + ": updates run on float32 or float64 weights, not " + weight.describe());
  auto same = [&](const NDArray& a, const char* what) {
    if (a.is_none() || a.shape() != weight.shape() || a.dtype() != weight.dtype() ||
        a.ctx() != weight.ctx())
      throw Error(str(owner, ": the ", what, " is ", a.describe(), " but the weight is ",
                      weight.describe()));
  };
  same(grad, "gradient");
  if (state.size() != expected_states)
    throw Error(str(owner, ": ", state.size(), " state arrays given, ", expected_states,
                    " expected (use create_state)"));
  for (const auto& s : state) same(s, "state array");
}

}  // namespace detail

// --- Optimizer -----------------------------------------------------------------

Optimizer::Optimizer(std::string name, const OptimizerFields& fields)
    : name_(std::move(name)), fields_(fields) {}

std::vector<NDArray> Optimizer::create_state(int /*index*/, const NDArray& weight) const {
  std::vector<NDArray> state;
  for (size_t k = 0; k < state_names().size(); ++k)
    state.push_back(NDArray::zeros(weight.shape(), weight.ctx(), weight.dtype()));
  return state;
}

void Optimizer::update(int index, const NDArray& weight, const NDArray& grad,
                       const std::vector<NDArray>& state) {
  detail::check_update_arrays(name_, weight, grad, state, state_names().size());
  // MXNet's _update_count: the count starts at begin_num_update.
  auto& count = update_count_.try_emplace(index, fields_.begin_num_update).first->second;
  ++count;
  num_update_ = std::max(num_update_, count);
  Step step;
  step.lr = lr_for(index);
  step.wd = wd_for(index);
  step.t = count;
  push_update(weight, grad, state, step);
}

double Optimizer::learning_rate() {
  return scheduler_ ? (*scheduler_)(num_update_) : fields_.learning_rate;
}

void Optimizer::set_learning_rate(double lr) {
  if (scheduler_)
    throw InputError("optimizer '" + name_ +
                     "': the learning rate is decided by the lr_scheduler; it cannot be set");
  if (lr < 0) throw InputError(str("optimizer '", name_, "': learning_rate ", lr, " is negative"));
  fields_.learning_rate = lr;
}

void Optimizer::set_lr_scheduler(std::unique_ptr<LRScheduler> scheduler) {
  scheduler_ = std::move(scheduler);
}

void Optimizer::set_param_names(std::map<int, std::string> idx2name) {
  idx2name_ = std::move(idx2name);
}
void Optimizer::set_lr_mult(std::map<std::string, double> lr_mult) {
  lr_mult_ = std::move(lr_mult);
}
void Optimizer::set_wd_mult(std::map<std::string, double> wd_mult) {
  wd_mult_ = std::move(wd_mult);
}

double Optimizer::lr_mult(int index) const {
  auto name = idx2name_.find(index);
  if (name == idx2name_.end()) return 1.0;
  auto mult = lr_mult_.find(name->second);
  return mult == lr_mult_.end() ? 1.0 : mult->second;
}

double Optimizer::wd_mult(int index) const {
  auto name = idx2name_.find(index);
  if (name == idx2name_.end()) return 1.0;
  auto mult = wd_mult_.find(name->second);
  if (mult != wd_mult_.end()) return mult->second;
  const std::string& n = name->second;
  return n.ends_with("_weight") || n.ends_with("_gamma") ? 1.0 : 0.0;
}

double Optimizer::lr_for(int index) { return learning_rate() * lr_mult(index); }
double Optimizer::wd_for(int index) const { return fields_.wd * wd_mult(index); }

int64_t Optimizer::update_count(int index) const {
  auto it = update_count_.find(index);
  return it == update_count_.end() ? 0 : it->second;
}

double Optimizer::clip_bound() const {
  return fields_.clip_gradient && *fields_.clip_gradient > 0 ? *fields_.clip_gradient : -1.0;
}

kernels::StepScalars Optimizer::scalars(const Step& step) const {
  return {step.lr, step.wd, fields_.rescale_grad, clip_bound()};
}

nlohmann::json Optimizer::counters() const {
  nlohmann::json j;
  j["num_update"] = num_update_;
  nlohmann::json counts = nlohmann::json::object();
  for (const auto& [index, n] : update_count_) counts[std::to_string(index)] = n;
  j["update_count"] = counts;
  j["lr_scheduler"] = scheduler_ ? scheduler_->state() : nlohmann::json();
  return j;
}

void Optimizer::load_counters(const nlohmann::json& j, const std::string& source) {
  auto bad = [&](const std::string& what) {
    return InputError(source + ": optimizer counters: " + what);
  };
  if (!j.is_object() || !j.contains("num_update") || !j["num_update"].is_number_integer())
    throw bad("no integer 'num_update'");
  if (!j.contains("update_count") || !j["update_count"].is_object())
    throw bad("no 'update_count' object");
  std::map<int, int64_t> counts;
  for (const auto& [key, value] : j["update_count"].items()) {
    int index = 0;
    try {
      size_t used = 0;
      index = std::stoi(key, &used);
      if (used != key.size()) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      throw bad("'" + key + "' is not a parameter index");
    }
    if (!value.is_number_integer() || value.get<int64_t>() < 0)
      throw bad("the count of index " + key + " is not a non-negative integer");
    counts[index] = value.get<int64_t>();
  }
  const bool saved_schedule = j.contains("lr_scheduler") && !j["lr_scheduler"].is_null();
  if (saved_schedule != (scheduler_ != nullptr))
    throw bad(saved_schedule ? "the states were saved with an lr_scheduler but none is set now"
                             : "the states were saved without an lr_scheduler but one is set now");
  if (scheduler_) scheduler_->load_state(j["lr_scheduler"], source);
  update_count_ = std::move(counts);
  num_update_ = j["num_update"].get<int64_t>();
}

// --- factory ---------------------------------------------------------------------

std::vector<std::string> optimizer_names() {
  return {"sgd", "nag", "adam", "adamw", "rmsprop", "adagrad"};
}

std::unique_ptr<Optimizer> make_optimizer(const std::string& name,
                                          const std::map<std::string, std::string>& params) {
  const std::string key = to_lower(name);
  const std::string owner = "optimizer '" + key + "'";
  if (key == "sgd") return std::make_unique<SGD>(SGDParams::from_strings(params, owner));
  if (key == "nag") return std::make_unique<NAG>(NAGParams::from_strings(params, owner));
  if (key == "adam") return std::make_unique<Adam>(AdamParams::from_strings(params, owner));
  if (key == "adamw") return std::make_unique<AdamW>(AdamWParams::from_strings(params, owner));
  if (key == "rmsprop")
    return std::make_unique<RMSProp>(RMSPropParams::from_strings(params, owner));
  if (key == "adagrad")
    return std::make_unique<AdaGrad>(AdaGradParams::from_strings(params, owner));
  const auto names = optimizer_names();
  throw InputError("unknown optimizer '" + name + "'" + did_you_mean(key, names) +
                   "; optimizers are: " + join(names, ", "));
}

// --- Updater -----------------------------------------------------------------------

namespace {

constexpr const char* kStatesFormat = "mx-optimizer-states";
constexpr int kStatesVersion = 1;

// FNV-1a of a file's bytes, so a header only accepts the arrays it was
// written with (the two files are renamed into place one after the other).
std::string file_fingerprint(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError("cannot open " + path);
  uint64_t h = 0xcbf29ce484222325ull;
  std::vector<char> buffer(1 << 16);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    for (std::streamsize i = 0; i < in.gcount(); ++i)
      h = (h ^ static_cast<unsigned char>(buffer[static_cast<size_t>(i)])) * 0x100000001b3ull;
  }
  std::ostringstream os;
  os << std::hex << h;
  return os.str();
}

}  // namespace

Updater::Updater(std::unique_ptr<Optimizer> optimizer) : optimizer_(std::move(optimizer)) {
  MX_CHECK(optimizer_ != nullptr, "Updater needs an optimizer");
}

void Updater::operator()(int index, const NDArray& grad, const NDArray& weight) {
  auto it = states_.find(index);
  if (it == states_.end())
    it = states_.emplace(index, optimizer_->create_state(index, weight)).first;
  optimizer_->update(index, weight, grad, it->second);
}

const std::vector<NDArray>& Updater::state(int index) const {
  static const std::vector<NDArray> kNone;
  auto it = states_.find(index);
  return it == states_.end() ? kNone : it->second;
}

void Updater::save_states(const std::string& path) const {
  const auto names = optimizer_->state_names();
  NamedArrays arrays;
  nlohmann::json layout = nlohmann::json::object();
  for (const auto& [index, state] : states_) {
    layout[std::to_string(index)] = names;
    for (size_t k = 0; k < state.size(); ++k) {
      arrays.names.push_back(std::to_string(index) + ":" + names[k]);
      arrays.arrays.push_back(state[k]);
    }
  }
  nlohmann::json header;
  header["format"] = kStatesFormat;
  header["version"] = kStatesVersion;
  header["optimizer"] = optimizer_->name();
  header["params"] = optimizer_->params();
  nlohmann::json param_names = nlohmann::json::object();
  for (const auto& [index, name] : optimizer_->param_names())
    param_names[std::to_string(index)] = name;
  header["param_names"] = param_names;
  header["states"] = layout;
  header["counters"] = optimizer_->counters();
  // The arrays first: a header only exists next to the arrays it describes.
  save_params(path, arrays);
  header["params_fnv1a"] = file_fingerprint(path);
  write_file_atomically(path + ".json", [&](std::ostream& out) { out << header.dump(2) << "\n"; });
}

void Updater::load_states(const std::string& path, Context ctx) {
  const std::string header_path = path + ".json";
  std::ifstream in(header_path);
  if (!in) throw InputError("cannot open optimizer state header " + header_path);
  nlohmann::json header;
  try {
    header = nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(header_path + ": not valid JSON (byte " + std::to_string(e.byte) + ")");
  }
  auto bad = [&](const std::string& what) { return InputError(header_path + ": " + what); };
  auto text = [&](const char* key) {
    return header.is_object() && header.contains(key) && header[key].is_string()
               ? header[key].get<std::string>()
               : std::string();
  };
  if (text("format") != kStatesFormat)
    throw bad(std::string("not an optimizer state header (\"format\" is not \"") + kStatesFormat +
              "\")");
  if (!header.contains("version") || !header["version"].is_number_integer() ||
      header["version"].get<int64_t>() != kStatesVersion)
    throw bad("unsupported version " + header.value("version", nlohmann::json()).dump() +
              "; this build reads version " + std::to_string(kStatesVersion));
  const std::string saved = text("optimizer");
  if (saved != optimizer_->name())
    throw bad("the states were saved by optimizer '" + saved + "' but this run uses '" +
              optimizer_->name() + "'");
  if (!header.contains("states") || !header["states"].is_object()) throw bad("no 'states' object");
  if (!header.contains("counters")) throw bad("no 'counters' object");

  if (text("params_fnv1a") != file_fingerprint(path))
    throw bad("it does not describe " + path +
              " (the arrays were written by another save); save the states again");
  const NamedArrays arrays = load_params(path, ctx);
  std::map<std::string, NDArray> by_name;
  for (size_t i = 0; i < arrays.arrays.size() && i < arrays.names.size(); ++i)
    by_name[arrays.names[i]] = arrays.arrays[i];

  const auto expected = optimizer_->state_names();
  std::map<int, std::vector<NDArray>> loaded;
  for (const auto& [key, names_json] : header["states"].items()) {
    int index = 0;
    try {
      size_t used = 0;
      index = std::stoi(key, &used);
      if (used != key.size()) throw std::invalid_argument(key);
    } catch (const std::exception&) {
      throw bad("'" + key + "' is not a parameter index");
    }
    if (!names_json.is_array()) throw bad("the state names of index " + key + " are not a list");
    std::vector<std::string> names;
    for (const auto& n : names_json) {
      if (!n.is_string()) throw bad("a state name of index " + key + " is not a string");
      names.push_back(n.get<std::string>());
    }
    if (names != expected)
      throw bad("index " + key + " was saved with state arrays [" + join(names, ", ") +
                "] but optimizer '" + optimizer_->name() + "' with these parameters keeps [" +
                join(expected, ", ") + "]");
    std::vector<NDArray> state;
    for (const auto& n : names) {
      auto it = by_name.find(key + ":" + n);
      if (it == by_name.end()) throw InputError(path + ": no array named '" + key + ":" + n + "'");
      state.push_back(it->second);
    }
    loaded.emplace(index, std::move(state));
  }
  optimizer_->load_counters(header["counters"], header_path);
  states_ = std::move(loaded);
}

}  // namespace mx::optim
