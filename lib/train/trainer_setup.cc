#include "train/trainer_setup.h"

#include <algorithm>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "base/param_value.h"
#include "base/strings.h"
#include "io/device_prefetch_iter.h"
#include "optim/initializer.h"
#include "optim/lr_scheduler.h"
#include "train/carried_states.h"
#include "train/data_config.h"
#include "train/loss_scale_graph.h"
#include "train/network_yaml.h"
#include "train/pretrained.h"
#include "train/rnn_init.h"

namespace mx::train {
namespace fs = std::filesystem;

graph::Symbol load_network(const Config& c, LayerOrigins* origins) {
  if (c.has("network") == c.has("symbol"))
    throw InputError(
        "the config needs exactly one of 'network' (layers in YAML) or 'symbol' (an MXNet "
        "-symbol.json)");
  if (c.has("network"))
    return build_network(c.at("network").value,
                         c.origin("network").substr(0, c.origin("network").find(':')), origins);
  std::string path = c.get_string("symbol", "");
  if (fs::path(path).is_relative() && !fs::exists(path))
    path = (fs::path(c.directory()) / path).string();
  return graph::Symbol::load(path);
}

std::optional<Shape> configured_data_shape(const Config& c, const TrainSettings& settings) {
  const std::string type = c.get_string("data.train.type", "");
  if (type != "text" && type != "TextIter") return std::nullopt;
  return Shape{c.get_int("data.train.batch_size", settings.batch_size),
               c.get_int("data.train.seq_len", 35)};
}

void check_network_takes(const graph::Symbol& network, const TrainSettings& settings,
                         const Shape& data_shape, const LayerOrigins& origins) {
  try {
    network.infer_shape({{settings.data_name, data_shape}});
  } catch (const InputError& e) {
    const std::string origin = origin_of_error(origins, e.what());
    throw InputError(str(origin.empty() ? "" : origin + ": ",
                         "the network does not take the data (", settings.data_name, " ",
                         data_shape.to_string(), "): ", e.what()));
  }
}

namespace {

// A data section with the run's batch size and seed and this worker's shard.
std::unique_ptr<DataIter> make_section_data(const Config& c, const TrainSettings& settings,
                                            DataShard shard, const std::string& section,
                                            bool shuffle) {
  DataDefaults defaults;
  defaults.batch_size = settings.batch_size;
  defaults.seed = static_cast<int>(settings.seed);
  defaults.part_index = shard.part_index;
  defaults.num_parts = shard.num_parts;
  defaults.shuffle = shuffle;
  auto iter = make_data_iter(c, section, defaults);
  // GPUs: batches in pinned memory, copied ahead on the copy stream (one GPU
  // takes the whole batch there; several copy their shares from pinned memory).
  const Context first = settings.devices[0];
  if (!first.is_gpu()) return iter;
  return std::make_unique<DevicePrefetchIter>(
      std::move(iter), settings.devices.size() == 1 ? first : pinned_context_for(first));
}

}  // namespace

std::unique_ptr<DataIter> make_train_data(const Config& c, const TrainSettings& settings,
                                          DataShard shard) {
  if (!c.has("data.train.type")) throw InputError("the config needs data.train (with a type)");
  return make_section_data(c, settings, shard, "data.train", true);
}

std::unique_ptr<DataIter> make_val_data(const Config& c, const TrainSettings& settings,
                                        DataShard shard) {
  if (!c.has("data.val.type")) return nullptr;
  return make_section_data(c, settings, shard, "data.val", false);
}

std::unique_ptr<Executor> bind_for_training(const graph::Symbol& network, const TrainSettings& s,
                                            const DataIter& data, Context device, int64_t batch) {
  BindOptions bind;
  bind.ctx = device;
  bind.for_training = true;
  bind.grad_req = {{s.data_name, graph::GradReq::kNull}, {s.label_name, graph::GradReq::kNull}};
  for (const auto& name : CarriedStates(network).inputs())
    bind.grad_req[name] = graph::GradReq::kNull;
  bind.mirror = s.mirror;
  Shape data_shape = data.data_shape();
  Shape label_shape = data.label_shape();
  if (batch > 0) {
    data_shape[0] = batch;
    label_shape[0] = batch;
  }
  const auto args = network.list_arguments();
  const auto inferred = network.infer_shape({{s.data_name, data_shape}});
  const size_t label_index =
      static_cast<size_t>(std::find(args.begin(), args.end(), s.label_name) - args.begin());
  const Shape want_label = inferred.arguments[label_index];
  // The label as the loss layer takes it, when the batch's holds the same
  // values in another shape: (batch, 1) for (batch,), a language model's
  // (batch, steps) for (batch * steps,). feed_batch reshapes each batch.
  Shape bind_label = label_shape;
  if (want_label.is_known() && want_label.size() == label_shape.size()) bind_label = want_label;
  graph::ShapeMap shapes{{s.data_name, data_shape}, {s.label_name, bind_label}};
  // A low precision binds the AMP pass's copy; the network itself (what
  // checkpoints save) stays float32.
  graph::Symbol bound = apply_precision(network, s.precision, s.devices);
  if (s.loss_scale.on()) {
    bound = scale_loss_gradient(bound);
    shapes[kLossScaleInput] = Shape{1};
    bind.grad_req[kLossScaleInput] = graph::GradReq::kNull;
  }
  try {
    return Executor::simple_bind(bound, shapes, bind);
  } catch (const InputError& e) {
    throw InputError(str("the data (", s.data_name, " ", data_shape.to_string(), ", ", s.label_name,
                         " ", label_shape.to_string(), ") does not fit the network: ", e.what()));
  }
}

std::vector<std::string> parameter_names(const graph::Symbol& network, const TrainSettings& s) {
  std::vector<std::string> names;
  const std::vector<std::string> carried = CarriedStates(network).inputs();
  for (const auto& a : network.list_arguments())
    if (a != s.data_name && a != s.label_name &&
        std::find(carried.begin(), carried.end(), a) == carried.end())
      names.push_back(a);
  return names;
}

void initialize_parameters(const Config& c, const TrainSettings& settings,
                           const graph::Symbol& network, const Executor& exe,
                           const std::vector<std::string>& param_names) {
  std::map<std::string, std::string> init_params = c.section("initializer");
  const std::string init_type = init_params.count("type") ? init_params["type"] : "xavier";
  init_params.erase("type");
  auto initializer = optim::make_initializer(init_type, init_params, settings.seed);
  const std::vector<std::string> rnn = initialize_rnn_parameters(network, exe, *initializer);
  for (const auto& name : param_names)
    if (std::find(rnn.begin(), rnn.end(), name) == rnn.end())
      (*initializer)(name, exe.arg_dict().at(name));
  for (const auto& [name, a] : exe.aux_dict()) (*initializer)(name, a);
  if (!c.has("train.pretrained")) return;
  std::map<std::string, NDArray> targets = exe.aux_dict();
  for (const auto& name : param_names) targets[name] = exe.arg_dict().at(name);
  const std::string path = c.get_string("train.pretrained", "");
  auto report = load_pretrained_weights(path, targets);
  std::cout << "pretrained weights from " << path << ":\n" << report.to_string() << "\n";
}

namespace {

// lr_mult / wd_mult set on a variable, else on the layer it feeds, apply to
// that parameter.
void set_multipliers(const graph::Symbol& network, optim::Optimizer& optimizer) {
  std::map<std::string, double> lr_mult, wd_mult;
  for (const auto& node : graph::topo_order(network.outputs())) {
    if (node->is_variable()) continue;
    for (const auto& in : node->inputs) {
      if (!in.node->is_variable()) continue;
      for (auto [key, target] :
           {std::pair{"__lr_mult__", &lr_mult}, std::pair{"__wd_mult__", &wd_mult}}) {
        auto own = in.node->attrs.find(key);
        auto layer = node->attrs.find(key);
        if (own != in.node->attrs.end())
          (*target)[in.node->name] = std::stod(own->second);
        else if (layer != node->attrs.end())
          (*target)[in.node->name] = std::stod(layer->second);
      }
    }
  }
  if (!lr_mult.empty()) optimizer.set_lr_mult(lr_mult);
  if (!wd_mult.empty()) optimizer.set_wd_mult(wd_mult);
}

}  // namespace

std::unique_ptr<optim::Updater> make_updater(const Config& c, const graph::Symbol& network,
                                             const std::vector<std::string>& param_names,
                                             int batch_size) {
  return std::make_unique<optim::Updater>(make_optimizer(c, network, param_names, batch_size));
}

namespace {

// A parameter error of a config section ("optimizer 'sgd': parameter
// 'learning_rate': ...") belongs to the place that set that parameter — the
// config file's line or the command-line override — not to the section.
std::string origin_of_section_error(const Config& c, const std::string& section,
                                    const std::map<std::string, std::string>& values,
                                    const std::string& message) {
  for (const auto& [key, value] : values)
    if (message.find("parameter '" + key + "'") != std::string::npos && c.has(section + "." + key))
      return c.origin(section + "." + key);
  return c.origin(section + ".type");
}

}  // namespace

std::unique_ptr<optim::Optimizer> make_configured_optimizer(const Config& c, int batch_size) {
  auto opt_params = c.section("optimizer");
  const std::string opt_type = opt_params.count("type") ? opt_params["type"] : "sgd";
  opt_params.erase("type");
  opt_params.erase("clip_global_norm");  // the trainer's (TrainSettings), not the optimizer's
  if (!opt_params.count("rescale_grad"))
    opt_params["rescale_grad"] = param_value::print_double(1.0 / batch_size);
  std::unique_ptr<optim::Optimizer> optimizer;
  try {
    optimizer = optim::make_optimizer(opt_type, opt_params);
  } catch (const InputError& e) {
    throw InputError(origin_of_section_error(c, "optimizer", opt_params, e.what()) + ": " +
                     e.what());
  }
  if (c.has("lr_scheduler.type")) {
    auto sched = c.section("lr_scheduler");
    const std::string type = sched["type"];
    sched.erase("type");
    try {
      optimizer->set_lr_scheduler(
          optim::make_lr_scheduler(type, sched, optimizer->learning_rate()));
    } catch (const InputError& e) {
      throw InputError(origin_of_section_error(c, "lr_scheduler", sched, e.what()) + ": " +
                       e.what());
    }
  }
  return optimizer;
}

std::unique_ptr<optim::Optimizer> make_optimizer(const Config& c, const graph::Symbol& network,
                                                 const std::vector<std::string>& param_names,
                                                 int batch_size) {
  std::unique_ptr<optim::Optimizer> optimizer = make_configured_optimizer(c, batch_size);
  std::map<int, std::string> idx2name;
  for (size_t i = 0; i < param_names.size(); ++i) idx2name[static_cast<int>(i)] = param_names[i];
  optimizer->set_param_names(idx2name);
  set_multipliers(network, *optimizer);
  return optimizer;
}

}  // namespace mx::train
