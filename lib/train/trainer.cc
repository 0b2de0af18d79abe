#include "train/trainer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/file_util.h"
#include "base/logging.h"
#include "base/param_value.h"
#include "base/strings.h"
#include "executor/executor.h"
#include "metric/metric.h"
#include "op/registry.h"
#include "op/resources.h"
#include "optim/initializer.h"
#include "optim/lr_scheduler.h"
#include "optim/optimizer.h"
#include "train/checkpoint.h"
#include "train/data_config.h"
#include "train/network_yaml.h"

namespace mx::train {
namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

// The one piece of process state a signal handler may touch.
std::atomic<int> g_interrupts{0};

extern "C" void on_interrupt(int) {
  if (g_interrupts.fetch_add(1) >= 1) std::_Exit(130);  // second Ctrl-C: stop now
}

const std::vector<std::string>& allowed_keys() {
  static const std::vector<std::string> keys = {"network",
                                                "symbol",
                                                "data.train.*",
                                                "data.val.*",
                                                "optimizer.*",
                                                "lr_scheduler.*",
                                                "initializer.*",
                                                "kvstore",
                                                "train.epochs",
                                                "train.batch_size",
                                                "train.seed",
                                                "train.metrics",
                                                "train.devices",
                                                "train.checkpoint_every",
                                                "train.keep_checkpoints",
                                                "train.log_interval",
                                                "train.run_dir",
                                                "train.prefix",
                                                "train.mirror",
                                                "train.pretrained",
                                                "train.label_name",
                                                "train.data_name"};
  return keys;
}

std::string now_stamp() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", std::localtime(&t));
  return buf;
}

std::string format_duration(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0) return "--:--";
  int s = static_cast<int>(seconds + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%d:%02d:%02d", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%d:%02d", s / 60, s % 60);
  return buf;
}

std::string metrics_text(const std::vector<metric::MetricValue>& values,
                         const std::string& prefix = "") {
  std::ostringstream out;
  for (const auto& v : values)
    out << " " << prefix << v.name << " " << std::fixed << std::setprecision(4) << v.value;
  return out.str();
}

nlohmann::json metrics_json(const std::vector<metric::MetricValue>& values) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& v : values)
    j[v.name] = std::isfinite(v.value) ? nlohmann::json(v.value) : nlohmann::json(nullptr);
  return j;
}

graph::MirrorPolicy parse_mirror(const std::string& text, const std::string& origin) {
  if (text == "none" || text == "false" || text == "False") return graph::MirrorPolicy::kNone;
  if (text == "cheap" || text == "true" || text == "True") return graph::MirrorPolicy::kCheap;
  if (text == "all") return graph::MirrorPolicy::kAll;
  throw InputError(origin + ": train.mirror must be none, cheap or all, not '" + text + "'");
}

}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

bool interrupt_requested() { return g_interrupts.load() > 0; }

struct Trainer::State {
  Config config;
  TrainOptions options;
  graph::Symbol symbol;
  std::string data_name = "data", label_name;
  int epochs = 1, batch_size = 0, log_interval = 50, checkpoint_every = 1, keep_checkpoints = 3;
  uint64_t seed = 0;
  Context ctx = Context::cpu();
  std::vector<std::string> metric_names;
  std::string prefix_name = "model";
  graph::MirrorPolicy mirror = graph::MirrorPolicy::kNone;
  std::string run_dir;
  bool interrupted = false;

  std::unique_ptr<DataIter> train_data, val_data;
  std::unique_ptr<Executor> exe, val_exe;
  std::vector<std::string> param_names;  // optimizer indices
  std::unique_ptr<optim::Updater> updater;
  std::ofstream log;

  // The network's parameters (arguments other than data and label) by name.
  std::map<std::string, NDArray> params() const {
    std::map<std::string, NDArray> m;
    for (const auto& n : param_names) m[n] = exe->arg_dict().at(n);
    return m;
  }

  // A checkpoint: parameters, auxiliary states, optimizer state, position.
  void save(const CheckpointPaths& paths, const TrainerState& position) const {
    save_checkpoint(paths, symbol, params(), exe->aux_dict(), position);
    updater->save_states(paths.states());
  }

  void say(const std::string& line) {
    std::cout << line << std::endl;
    if (log) log << line << std::endl;
  }
};

Trainer::Trainer(Config config, TrainOptions options) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.config = std::move(config);
  s.options = std::move(options);
  Config& c = s.config;
  c.check_keys(allowed_keys());

  s.epochs = static_cast<int>(c.get_int("train.epochs", 1));
  if (s.epochs < 1)
    throw InputError(c.origin("train.epochs") + ": train.epochs must be at least 1");
  s.batch_size = static_cast<int>(c.get_int("train.batch_size", 64));
  if (s.batch_size < 1)
    throw InputError(c.origin("train.batch_size") + ": train.batch_size must be at least 1");
  s.seed = static_cast<uint64_t>(c.get_int("train.seed", 0));
  s.log_interval = std::max<int>(1, static_cast<int>(c.get_int("train.log_interval", 50)));
  s.checkpoint_every = static_cast<int>(c.get_int("train.checkpoint_every", 1));
  s.keep_checkpoints = static_cast<int>(c.get_int("train.keep_checkpoints", 3));
  s.metric_names = c.get_list("train.metrics", {"acc", "ce"});
  s.prefix_name = c.get_string("train.prefix", "model");
  s.mirror = parse_mirror(c.get_string("train.mirror", "none"), c.origin("train.mirror"));
  auto devices = c.get_list("train.devices", {"cpu"});
  if (devices.size() != 1)
    throw InputError(c.origin("train.devices") +
                     ": training on several devices needs a kvstore, which this build "
                     "does not have yet; give one device");
  try {
    s.ctx = Context::parse(devices[0]);
  } catch (const InputError& e) {
    throw InputError(c.origin("train.devices") + ": " + e.what());
  }
  const std::string kvstore = c.get_string("kvstore", "local");
  if (kvstore != "local" && kvstore != "device")
    throw InputError(
        c.origin("kvstore") + ": kvstore '" + kvstore +
        "' is not available in this build (local and device are; dist_* need mx-serve-ps)");

  // The network: YAML layers or an MXNet symbol file.
  if (c.has("network") == c.has("symbol"))
    throw InputError(
        "the config needs exactly one of 'network' (layers in YAML) or 'symbol' (an MXNet "
        "-symbol.json)");
  if (c.has("network")) {
    s.symbol = build_network(c.at("network").value,
                             c.origin("network").substr(0, c.origin("network").find(':')));
  } else {
    std::string path = c.get_string("symbol", "");
    if (fs::path(path).is_relative() && !fs::exists(path))
      path = (fs::path(c.directory()) / path).string();
    s.symbol = graph::Symbol::load(path);
  }
  const auto args = s.symbol.list_arguments();
  s.data_name = c.get_string("train.data_name", "data");
  if (std::find(args.begin(), args.end(), s.data_name) == args.end())
    throw InputError(str("the network has no input '", s.data_name,
                         "' (its arguments: ", join(args, ", "), ")"));
  s.label_name = c.get_string("train.label_name", "");
  if (s.label_name.empty())
    for (const auto& a : args)
      if (a.size() > 6 && a.compare(a.size() - 6, 6, "_label") == 0) s.label_name = a;
  if (s.label_name.empty())
    throw InputError(
        "the network has no label input (an argument named *_label, made by an output layer such "
        "as "
        "SoftmaxOutput); end the network with a loss layer");

  DataDefaults defaults;
  defaults.batch_size = s.batch_size;
  defaults.seed = static_cast<int>(s.seed);
  defaults.shuffle = true;
  if (!c.has("data.train.type")) throw InputError("the config needs data.train (with a type)");
  s.train_data = make_data_iter(c, "data.train", defaults);
  if (c.has("data.val.type")) {
    defaults.shuffle = false;
    s.val_data = make_data_iter(c, "data.val", defaults);
  }

  BindOptions bind;
  bind.ctx = s.ctx;
  bind.for_training = true;
  bind.grad_req = {{s.data_name, graph::GradReq::kNull}, {s.label_name, graph::GradReq::kNull}};
  bind.mirror = s.mirror;
  const Shape data_shape = s.train_data->data_shape();
  const Shape label_shape = s.train_data->label_shape();
  auto inferred = s.symbol.infer_shape({{s.data_name, data_shape}});
  const size_t label_index =
      static_cast<size_t>(std::find(args.begin(), args.end(), s.label_name) - args.begin());
  Shape want_label = inferred.arguments[label_index];
  Shape bind_label = label_shape;
  // Iterators give (batch, 1) labels where a loss layer wants (batch,).
  if (want_label.rank_known() && want_label.ndim() == 1 && label_shape.ndim() == 2 &&
      label_shape[1] == 1)
    bind_label = Shape{label_shape[0]};
  try {
    s.exe = Executor::simple_bind(s.symbol, {{s.data_name, data_shape}, {s.label_name, bind_label}},
                                  bind);
  } catch (const InputError& e) {
    throw InputError(str("the data (", s.data_name, " ", data_shape.to_string(), ", ", s.label_name,
                         " ", label_shape.to_string(), ") does not fit the network: ", e.what()));
  }
  for (const auto& a : args)
    if (a != s.data_name && a != s.label_name) s.param_names.push_back(a);

  // Initialization (a resumed run loads the checkpoint instead).
  const auto init_params = c.section("initializer");
  std::map<std::string, std::string> init_rest = init_params;
  const std::string init_type = init_rest.count("type") ? init_rest["type"] : "xavier";
  init_rest.erase("type");
  auto initializer = optim::make_initializer(init_type, init_rest, s.seed);
  for (const auto& name : s.param_names) (*initializer)(name, s.exe->arg_dict().at(name));
  for (const auto& [name, a] : s.exe->aux_dict()) (*initializer)(name, a);
  if (c.has("train.pretrained")) {
    auto targets = s.params();
    for (const auto& [n, a] : s.exe->aux_dict()) targets[n] = a;
    auto report = optim::load_pretrained(c.get_string("train.pretrained", ""), targets);
    std::cout << "pretrained weights from " << c.get_string("train.pretrained", "") << ":\n"
              << report.to_string();
  }

  // Optimizer: MXNet's Module rescales gradients by 1/batch_size by default.
  auto opt_params = c.section("optimizer");
  const std::string opt_type = opt_params.count("type") ? opt_params["type"] : "sgd";
  opt_params.erase("type");
  if (!opt_params.count("rescale_grad"))
    opt_params["rescale_grad"] = param_value::print_double(1.0 / s.batch_size);
  std::unique_ptr<optim::Optimizer> optimizer;
  try {
    optimizer = optim::make_optimizer(opt_type, opt_params);
  } catch (const InputError& e) {
    throw InputError(c.origin("optimizer.type") + ": " + e.what());
  }
  if (c.has("lr_scheduler.type")) {
    auto sched = c.section("lr_scheduler");
    const std::string type = sched["type"];
    sched.erase("type");
    try {
      optimizer->set_lr_scheduler(
          optim::make_lr_scheduler(type, sched, optimizer->learning_rate()));
    } catch (const InputError& e) {
      throw InputError(c.origin("lr_scheduler.type") + ": " + e.what());
    }
  }
  std::map<int, std::string> idx2name;
  for (size_t i = 0; i < s.param_names.size(); ++i)
    idx2name[static_cast<int>(i)] = s.param_names[i];
  optimizer->set_param_names(idx2name);
  // lr_mult / wd_mult set on a layer apply to its parameters.
  std::map<std::string, double> lr_mult, wd_mult;
  for (const auto& node : graph::topo_order(s.symbol.outputs())) {
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
  if (!lr_mult.empty()) optimizer->set_lr_mult(lr_mult);
  if (!wd_mult.empty()) optimizer->set_wd_mult(wd_mult);
  s.updater = std::make_unique<optim::Updater>(std::move(optimizer));
  metric::make_composite(s.metric_names);  // fail early on unknown metric names
}

Trainer::~Trainer() = default;

bool Trainer::interrupted() const { return s_->interrupted; }
const std::string& Trainer::run_dir() const { return s_->run_dir; }

void Trainer::train() {
  State& s = *s_;
  Config& c = s.config;
  TrainerState state;
  state.seed = s.seed;
  int start_epoch = 0, skip_batches = 0;

  // Run directory: a resumed run continues in the checkpoint's directory.
  CheckpointPaths resume_from;
  if (!s.options.resume.empty()) {
    try {
      resume_from = find_checkpoint(s.options.resume, s.prefix_name);
    } catch (const InputError& e) {
      throw InputError(std::string("--resume ") + e.what());
    }
    s.run_dir = fs::path(resume_from.prefix).parent_path().string();
    if (s.run_dir.empty()) s.run_dir = ".";
  } else if (!s.options.run_dir.empty()) {
    s.run_dir = s.options.run_dir;
  } else {
    s.run_dir = c.get_string(
        "train.run_dir", (fs::path("runs") / (s.options.config_name + "-" + now_stamp())).string());
  }
  fs::create_directories(s.run_dir);
  const std::string prefix = (fs::path(s.run_dir) / s.prefix_name).string();
  const std::string config_text = c.to_yaml();
  if (s.options.resume.empty())
    write_file_atomically((fs::path(s.run_dir) / "config.yaml").string(),
                          [&](std::ostream& o) { o << config_text; });
  s.log.open((fs::path(s.run_dir) / "train.log").string(), std::ios::app);

  auto& exe = *s.exe;
  if (!s.options.resume.empty()) {
    load_checkpoint_params(resume_from.params(), s.params(), exe.aux_dict());
    state = load_trainer_state(resume_from.trainer());
    s.updater->load_states(resume_from.states(), s.ctx);
    start_epoch = state.epoch;
    skip_batches = state.batches_done;
    s.say(str("resumed from ", resume_from.params(), " (epoch ", state.epoch,
              skip_batches ? str(", batch ", skip_batches) : std::string(), ")"));
  }
  s.say(str("run directory: ", s.run_dir));

  auto train_metric = metric::make_composite(s.metric_names);
  auto val_metric = metric::make_composite(s.metric_names);
  NDArray data_arg = exe.arg_dict().at(s.data_name);
  NDArray label_arg = exe.arg_dict().at(s.label_name);
  std::optional<int64_t> batches_per_epoch;

  auto first_bad_batch = std::make_shared<std::atomic<int64_t>>(-1);
  bool labels_checked = false;

  for (int epoch = start_epoch; epoch < s.epochs; ++epoch) {
    // The iterator's order in epoch e comes from e resets (a resumed run
    // catches up on the ones it did not see).
    for (int r = epoch == start_epoch ? 0 : epoch - 1; r < epoch; ++r) s.train_data->reset();
    // Dropout and other random operators: a sequence that depends only on
    // the seed and the epoch, so a resumed run matches an uninterrupted one.
    op::ResourceManager::get().seed(s.seed * 1000003ull + static_cast<uint64_t>(epoch));
    train_metric->reset();
    const auto epoch_start = Clock::now();
    int64_t batch_index = 0, samples = 0;
    auto last_report = Clock::now();
    while (auto batch = s.train_data->next()) {
      if (skip_batches > 0) {
        --skip_batches;
        ++batch_index;
        continue;
      }
      const int real = static_cast<int>(batch->data.shape()[0]) - batch->pad;
      batch->data.copy_to(data_arg);
      NDArray label = batch->label.shape() == label_arg.shape()
                          ? batch->label
                          : batch->label.reshape(label_arg.shape());
      if (!labels_checked) {
        // Labels must index the network's classes (classification outputs).
        const Shape out = exe.outputs()[0].shape();
        if (out.ndim() == 2 && label.shape().ndim() == 1) {
          auto values = label.to_vector<float>();
          float top = *std::max_element(values.begin(), values.end());
          float low = *std::min_element(values.begin(), values.end());
          if (low < 0 || top >= static_cast<float>(out[1]))
            throw InputError(str("the labels do not fit the output: label ",
                                 top < static_cast<float>(out[1]) ? low : top,
                                 " in the training data, but the network has ", out[1],
                                 " classes (labels must be 0..", out[1] - 1, ")"));
        }
        labels_checked = true;
      }
      label.copy_to(label_arg);
      exe.forward(true);
      exe.backward();
      for (size_t i = 0; i < s.param_names.size(); ++i)
        (*s.updater)(static_cast<int>(i), exe.grad_dict().at(s.param_names[i]),
                     exe.arg_dict().at(s.param_names[i]));
      NDArray out = exe.outputs()[0];
      train_metric->update({real < label.shape()[0] ? label.slice(0, real) : label},
                           {real < out.shape()[0] ? out.slice(0, real) : out});
      // A non-finite output is noticed without waiting for it.
      Engine::get().push(
          [out, first_bad_batch, index = batch_index](RunContext) {
            const float* p = out.data<float>();
            for (int64_t i = 0; i < out.size(); ++i)
              if (!std::isfinite(p[i])) {
                int64_t none = -1;
                first_bad_batch->compare_exchange_strong(none, index);
                return;
              }
          },
          s.ctx, {out.var()}, {}, FnProperty::kNormal, 0, "check outputs");
      ++batch_index;
      samples += real;
      if (first_bad_batch->load() >= 0) {
        Engine::get().wait_all();
        // Find the first layer whose output is not finite, on this batch.
        std::string first_layer;
        exe.set_monitor([&first_layer](const std::string& name, const NDArray& value) {
          if (!first_layer.empty() || value.dtype() != DType::kFloat32) return;
          const float* p = value.data<float>();
          for (int64_t i = 0; i < value.size(); ++i)
            if (!std::isfinite(p[i])) {
              first_layer = name;
              return;
            }
        });
        exe.forward(true);
        Engine::get().wait_all();
        exe.set_monitor(nullptr);
        throw Error(
            str("the loss became NaN or infinite in epoch ", epoch + 1, ", batch ",
                first_bad_batch->load() + 1,
                "; first non-finite output: ", first_layer.empty() ? "(the weights)" : first_layer,
                ". Try a smaller learning rate or gradient clipping (optimizer.clip_gradient)"));
      }
      const bool report =
          batch_index % s.log_interval == 0 ||
          (s.options.progress_bar && Clock::now() - last_report > std::chrono::milliseconds(250));
      if (report) {
        last_report = Clock::now();
        const double secs = std::chrono::duration<double>(Clock::now() - epoch_start).count();
        const double rate = samples / std::max(secs, 1e-9);
        std::string line = str("epoch ", epoch + 1, "/", s.epochs, " batch ", batch_index);
        if (batches_per_epoch) {
          const double left =
              static_cast<double>(*batches_per_epoch - batch_index) * secs / batch_index;
          line += str("/", *batches_per_epoch, " ETA ", format_duration(left));
        }
        std::ostringstream rate_text;
        rate_text << std::fixed << std::setprecision(1) << rate;
        line += " " + rate_text.str() + " samples/s" + metrics_text(train_metric->get_all());
        if (s.options.progress_bar) {
          std::cerr << "\r" << line << "\033[K" << std::flush;
        } else {
          std::cerr << line << "\n";
        }
      }
      if (interrupt_requested()) {
        Engine::get().wait_all();
        state.epoch = epoch;
        state.batches_done = static_cast<int>(batch_index);
        state.num_update = s.updater->optimizer().num_update();
        CheckpointPaths paths{prefix, epoch};
        s.save(paths, state);
        if (s.options.progress_bar) std::cerr << "\n";
        s.say(str("interrupted in epoch ", epoch + 1, " after batch ", batch_index, "; checkpoint ",
                  paths.params(), "; continue with: mx-train --resume ", paths.params_base()));
        s.interrupted = true;
        return;
      }
    }
    batches_per_epoch = batch_index;
    if (s.options.progress_bar) std::cerr << "\n";
    const auto train_values = train_metric->get_all();
    const double seconds = std::chrono::duration<double>(Clock::now() - epoch_start).count();

    std::vector<metric::MetricValue> val_values;
    if (s.val_data) {
      s.val_data->reset();
      val_metric->reset();
      while (auto batch = s.val_data->next()) {
        const int real = static_cast<int>(batch->data.shape()[0]) - batch->pad;
        if (batch->data.shape() != data_arg.shape())
          throw InputError(str("validation batches ", batch->data.shape().to_string(),
                               " differ from training batches ", data_arg.shape().to_string(),
                               "; use the same batch size and shape"));
        batch->data.copy_to(data_arg);
        NDArray label = batch->label.shape() == label_arg.shape()
                            ? batch->label
                            : batch->label.reshape(label_arg.shape());
        exe.forward(false);
        NDArray out = exe.outputs()[0];
        val_metric->update({real < label.shape()[0] ? label.slice(0, real) : label},
                           {real < out.shape()[0] ? out.slice(0, real) : out});
      }
      val_values = val_metric->get_all();
    }
    const double lr = s.updater->optimizer().learning_rate();
    char lr_text[32];
    std::snprintf(lr_text, sizeof lr_text, "%.6g", lr);
    s.say(str("epoch ", epoch + 1, "/", s.epochs, ":", metrics_text(train_values, "train-"),
              metrics_text(val_values, "val-"), " lr ", lr_text, " time ", format_duration(seconds),
              " (", static_cast<int64_t>(samples / std::max(seconds, 1e-9)), " samples/s)"));
    nlohmann::json line{{"epoch", epoch + 1},
                        {"train", metrics_json(train_values)},
                        {"val", metrics_json(val_values)},
                        {"seconds", seconds},
                        {"samples_per_sec", samples / std::max(seconds, 1e-9)},
                        {"learning_rate", lr}};
    {
      std::ofstream jsonl((fs::path(s.run_dir) / "metrics.jsonl").string(), std::ios::app);
      jsonl << line.dump() << "\n";
    }
    const bool last = epoch + 1 == s.epochs;
    if (s.checkpoint_every > 0 && ((epoch + 1) % s.checkpoint_every == 0 || last)) {
      state.epoch = epoch + 1;
      state.batches_done = 0;
      state.num_update = s.updater->optimizer().num_update();
      CheckpointPaths paths{prefix, epoch + 1};
      s.save(paths, state);
      prune_checkpoints(prefix, s.keep_checkpoints);
    }
  }
}

struct DescribeInput {
  const graph::Symbol* symbol;
  graph::ShapeMap shapes;
  std::set<std::string> inputs;
  BindOptions bind;
};
void describe_network(std::ostream& out, bool json, const DescribeInput& d);
void benchmark_network(std::ostream& out, int iterations, const DescribeInput& d);

// What --dry-run and --benchmark look at: the bound network and its input shapes.
static DescribeInput describe_input(const graph::Symbol& symbol, const Executor& exe,
                                    const std::string& data, const std::string& label, Context ctx,
                                    graph::MirrorPolicy mirror) {
  DescribeInput d{
      &symbol,
      {{data, exe.arg_dict().at(data).shape()}, {label, exe.arg_dict().at(label).shape()}},
      {data, label},
      {}};
  d.bind.ctx = ctx;
  d.bind.grad_req = {{data, graph::GradReq::kNull}, {label, graph::GradReq::kNull}};
  d.bind.mirror = mirror;
  return d;
}

void Trainer::describe(std::ostream& out, bool json) const {
  const State& s = *s_;
  describe_network(out, json,
                   describe_input(s.symbol, *s.exe, s.data_name, s.label_name, s.ctx, s.mirror));
}

void Trainer::benchmark(std::ostream& out, int iterations) const {
  const State& s = *s_;
  benchmark_network(out, iterations,
                    describe_input(s.symbol, *s.exe, s.data_name, s.label_name, s.ctx, s.mirror));
}

}  // namespace mx::train
