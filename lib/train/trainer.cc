#include "train/trainer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "base/strings.h"
#include "executor/executor.h"
#include "metric/metric.h"
#include "op/resources.h"
#include "optim/optimizer.h"
#include "train/checkpoint.h"
#include "train/nonfinite_watch.h"
#include "train/progress.h"
#include "train/run_dir.h"
#include "train/trainer_describe.h"
#include "train/trainer_setup.h"

namespace mx::train {

namespace {

// The one piece of process state a signal handler may touch.
std::atomic<int> g_interrupts{0};

extern "C" void on_interrupt(int) {
  if (g_interrupts.fetch_add(1) >= 1) std::_Exit(130);  // second Ctrl-C: stop now
}

nlohmann::json metrics_json(const std::vector<metric::MetricValue>& values) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& v : values)
    j[v.name] = std::isfinite(v.value) ? nlohmann::json(v.value) : nlohmann::json(nullptr);
  return j;
}

// The first `real` rows of a batch (the last batch of an epoch is padded).
NDArray real_rows(const NDArray& a, int real) { return real < a.shape()[0] ? a.slice(0, real) : a; }

}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
}

bool interrupt_requested() { return g_interrupts.load() > 0; }

// A batch in the executor's input arrays.
struct FedBatch {
  NDArray label;  // as the network takes it
  int real = 0;   // samples that are not padding
};

struct Trainer::State {
  Config config;
  TrainOptions options;
  TrainSettings settings;
  graph::Symbol symbol;
  std::unique_ptr<DataIter> train_data, val_data;
  std::unique_ptr<Executor> exe;
  std::vector<std::string> param_names;  // optimizer indices
  std::unique_ptr<optim::Updater> updater;

  std::optional<RunDir> run;
  TrainerState position;  // what a checkpoint records
  int skip_batches = 0;   // of the first epoch: trained before an interrupt
  std::optional<int64_t> batches_per_epoch;
  std::unique_ptr<metric::CompositeMetric> train_metric, val_metric;
  NonFiniteWatch watch;
  bool labels_checked = false;
  bool interrupted = false;

  // The network's parameters (arguments other than data and label) by name.
  std::map<std::string, NDArray> params() const {
    std::map<std::string, NDArray> m;
    for (const auto& n : param_names) m[n] = exe->arg_dict().at(n);
    return m;
  }

  void open_run();
  void start_epoch(int epoch, int first_epoch);
  FedBatch feed_batch(const DataBatch& batch);
  void check_labels(const NDArray& label);
  void train_step(const FedBatch& batch);
  void update_parameters();
  void stop_interrupted(int epoch, const EpochProgress& progress);
  void end_epoch(int epoch, const EpochProgress& progress);
  std::vector<metric::MetricValue> validate();
  // Everything the run writes goes through these three and RunDir::say, so
  // that which process of a run writes is decided in one place.
  void save_checkpoint(int epoch, int batches_done);
  void log_epoch(int epoch, const EpochProgress& progress,
                 const std::vector<metric::MetricValue>& train_values,
                 const std::vector<metric::MetricValue>& val_values, double seconds);
};

Trainer::Trainer(Config config, TrainOptions options) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.config = std::move(config);
  s.options = std::move(options);
  s.settings = parse_train_settings(s.config);
  s.symbol = load_network(s.config);
  resolve_inputs(s.symbol, s.settings);
  s.train_data = make_train_data(s.config, s.settings);
  s.val_data = make_val_data(s.config, s.settings);
  s.exe = bind_for_training(s.symbol, s.settings, *s.train_data);
  s.param_names = parameter_names(s.symbol, s.settings);
  initialize_parameters(s.config, s.settings, *s.exe, s.param_names);  // resuming loads over it
  s.updater = make_updater(s.config, s.symbol, s.param_names, s.settings.batch_size);
  s.train_metric = metric::make_composite(s.settings.metric_names);  // unknown names fail here
  s.val_metric = metric::make_composite(s.settings.metric_names);
}

Trainer::~Trainer() = default;

bool Trainer::interrupted() const { return s_->interrupted; }
const std::string& Trainer::run_dir() const {
  static const std::string none;
  return s_->run ? s_->run->path() : none;
}

void Trainer::train() {
  State& s = *s_;
  s.open_run();
  const int first_epoch = s.position.epoch;
  for (int epoch = first_epoch; epoch < s.settings.epochs; ++epoch) {
    s.start_epoch(epoch, first_epoch);
    EpochProgress progress(epoch, s.settings.epochs, s.batches_per_epoch, s.settings.log_interval,
                           s.options.progress_bar);
    while (auto batch = s.train_data->next()) {
      if (s.skip_batches > 0) {
        --s.skip_batches;
        progress.skip();
        continue;
      }
      const FedBatch fed = s.feed_batch(*batch);
      s.train_step(fed);
      s.watch.watch(s.exe->outputs()[0], progress.batches(), s.settings.ctx);
      s.watch.throw_if_seen(*s.exe, epoch);
      progress.trained(fed.real, *s.train_metric);
      if (interrupt_requested()) {
        s.stop_interrupted(epoch, progress);
        return;
      }
    }
    s.end_epoch(epoch, progress);
  }
}

// The run directory, and for --resume the parameters, optimizer state and
// position of the checkpoint.
void Trainer::State::open_run() {
  run = RunDir::open(config, options, settings.prefix_name);
  position = TrainerState{};
  position.seed = settings.seed;
  if (const auto& from = run->resume_from()) {
    load_checkpoint_params(from->params(), params(), exe->aux_dict());
    position = load_trainer_state(from->trainer());
    updater->load_states(from->states(), settings.ctx);
    skip_batches = position.batches_done;
    run->say(str("resumed from ", from->params(), " (epoch ", position.epoch,
                 skip_batches ? str(", batch ", skip_batches) : std::string(), ")"));
  }
  run->say(str("run directory: ", run->path()));
}

void Trainer::State::start_epoch(int epoch, int first_epoch) {
  // The iterator's order in epoch e comes from e resets (a resumed run
  // catches up on the ones it did not see).
  for (int r = epoch == first_epoch ? 0 : epoch - 1; r < epoch; ++r) train_data->reset();
  // Dropout and other random operators: a sequence that depends only on the
  // seed and the epoch, so a resumed run matches an uninterrupted one.
  op::ResourceManager::get().seed(settings.seed * 1000003ull + static_cast<uint64_t>(epoch));
  train_metric->reset();
}

// Copies a batch into the executor's data and label arrays; iterators give
// (batch, 1) labels where a loss layer may take (batch,).
FedBatch Trainer::State::feed_batch(const DataBatch& batch) {
  NDArray data_arg = exe->arg_dict().at(settings.data_name);
  NDArray label_arg = exe->arg_dict().at(settings.label_name);
  batch.data.copy_to(data_arg);
  FedBatch fed;
  fed.label = batch.label.shape() == label_arg.shape() ? batch.label
                                                       : batch.label.reshape(label_arg.shape());
  fed.real = static_cast<int>(batch.data.shape()[0]) - batch.pad;
  fed.label.copy_to(label_arg);
  return fed;
}

// Labels must index the network's classes (classification outputs); checked
// on the first batch.
void Trainer::State::check_labels(const NDArray& label) {
  const Shape out = exe->outputs()[0].shape();
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

// One step: forward, backward, update, metrics.
void Trainer::State::train_step(const FedBatch& batch) {
  if (!labels_checked) check_labels(batch.label);
  exe->forward(true);
  exe->backward();
  update_parameters();
  train_metric->update({real_rows(batch.label, batch.real)},
                       {real_rows(exe->outputs()[0], batch.real)});
}

// The one place the parameters change, so that a kvstore can take the
// optimizer's place: each gradient goes through the optimizer (the updates
// overlap the rest of the backward pass on the engine).
void Trainer::State::update_parameters() {
  for (size_t i = 0; i < param_names.size(); ++i)
    (*updater)(static_cast<int>(i), exe->grad_dict().at(param_names[i]),
               exe->arg_dict().at(param_names[i]));
}

// Ctrl-C: a checkpoint of the position within the epoch, to resume from.
void Trainer::State::stop_interrupted(int epoch, const EpochProgress& progress) {
  Engine::get().wait_all();
  save_checkpoint(epoch, static_cast<int>(progress.batches()));
  progress.end_line();
  const CheckpointPaths paths = run->checkpoint(epoch);
  run->say(str("interrupted in epoch ", epoch + 1, " after batch ", progress.batches(),
               "; checkpoint ", paths.params(), "; continue with: mx-train --resume ",
               paths.params_base()));
  interrupted = true;
}

void Trainer::State::end_epoch(int epoch, const EpochProgress& progress) {
  batches_per_epoch = progress.batches();
  progress.end_line();
  const auto train_values = train_metric->get_all();
  const double seconds = progress.seconds();
  const auto val_values = validate();
  log_epoch(epoch, progress, train_values, val_values, seconds);
  const bool last = epoch + 1 == settings.epochs;
  if (settings.checkpoint_every > 0 && ((epoch + 1) % settings.checkpoint_every == 0 || last)) {
    save_checkpoint(epoch + 1, 0);
    prune_checkpoints(run->prefix(), settings.keep_checkpoints);
  }
}

std::vector<metric::MetricValue> Trainer::State::validate() {
  if (!val_data) return {};
  const Shape train_shape = exe->arg_dict().at(settings.data_name).shape();
  val_data->reset();
  val_metric->reset();
  while (auto batch = val_data->next()) {
    if (batch->data.shape() != train_shape)
      throw InputError(str("validation batches ", batch->data.shape().to_string(),
                           " differ from training batches ", train_shape.to_string(),
                           "; use the same batch size and shape"));
    const FedBatch fed = feed_batch(*batch);
    exe->forward(false);
    val_metric->update({real_rows(fed.label, fed.real)}, {real_rows(exe->outputs()[0], fed.real)});
  }
  return val_metric->get_all();
}

void Trainer::State::save_checkpoint(int epoch, int batches_done) {
  position.epoch = epoch;
  position.batches_done = batches_done;
  position.num_update = updater->optimizer().num_update();
  const CheckpointPaths paths = run->checkpoint(epoch);
  train::save_checkpoint(paths, symbol, params(), exe->aux_dict(), position);
  updater->save_states(paths.states());
}

void Trainer::State::log_epoch(int epoch, const EpochProgress& progress,
                               const std::vector<metric::MetricValue>& train_values,
                               const std::vector<metric::MetricValue>& val_values, double seconds) {
  const double lr = updater->optimizer().learning_rate();
  const double rate = static_cast<double>(progress.samples()) / std::max(seconds, 1e-9);
  char lr_text[32];
  std::snprintf(lr_text, sizeof lr_text, "%.6g", lr);
  run->say(str("epoch ", epoch + 1, "/", settings.epochs, ":", metrics_text(train_values, "train-"),
               metrics_text(val_values, "val-"), " lr ", lr_text, " time ",
               format_duration(seconds), " (", static_cast<int64_t>(rate), " samples/s)"));
  const nlohmann::json line{{"epoch", epoch + 1},
                            {"train", metrics_json(train_values)},
                            {"val", metrics_json(val_values)},
                            {"seconds", seconds},
                            {"samples_per_sec", rate},
                            {"learning_rate", lr}};
  run->append_metrics(line.dump());
}

// What --dry-run and --benchmark look at: the bound network and its input shapes.
static DescribeInput describe_input(const graph::Symbol& symbol, const Executor& exe,
                                    const TrainSettings& s) {
  const std::string& data = s.data_name;
  const std::string& label = s.label_name;
  DescribeInput d{
      &symbol,
      {{data, exe.arg_dict().at(data).shape()}, {label, exe.arg_dict().at(label).shape()}},
      {data, label},
      {}};
  d.bind.ctx = s.ctx;
  d.bind.grad_req = {{data, graph::GradReq::kNull}, {label, graph::GradReq::kNull}};
  d.bind.mirror = s.mirror;
  return d;
}

void Trainer::describe(std::ostream& out, bool json) const {
  describe_network(out, json, describe_input(s_->symbol, *s_->exe, s_->settings));
}

void Trainer::benchmark(std::ostream& out, int iterations) const {
  benchmark_network(out, iterations, describe_input(s_->symbol, *s_->exe, s_->settings));
}

}  // namespace mx::train
