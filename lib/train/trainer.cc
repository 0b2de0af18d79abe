#include "train/trainer.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/error.h"
#include "base/strings.h"
#include "executor/executor.h"
#include "kvstore/coordinator.h"
#include "kvstore/kvstore_params.h"
#include "metric/metric.h"
#include "op/resources.h"
#include "optim/optimizer.h"
#include "train/aux_states.h"
#include "train/carried_states.h"
#include "train/checkpoint.h"
#include "train/config_check.h"
#include "train/interval_record.h"
#include "train/loss_scaler.h"
#include "train/nonfinite_watch.h"
#include "train/parameter_updates.h"
#include "train/precision.h"
#include "train/progress.h"
#include "train/run_curves.h"
#include "train/run_dir.h"
#include "train/run_summary.h"
#include "train/scaled_gradients.h"
#include "train/step_profile.h"
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

// The rows of one executor's labels or outputs that come from its `real`
// samples out of `samples` (the last batch of an epoch is padded). A sequence
// model's arrays hold several rows per sample (a language model's output is
// (samples x steps, classes) once a Reshape flattens its NTC sequence), so
// every row of a whole batch counts, and of a padded one the first
// real x steps.
NDArray real_rows(const NDArray& a, int real, int samples) {
  const int64_t rows = a.shape()[0];
  if (real >= samples) return a;
  const int64_t per_sample = rows % samples == 0 ? rows / samples : 1;
  return a.slice(0, real * per_sample);
}

// FNV-1a of the resolved config: the workers of a distributed run must agree
// on it (std::hash may differ between hosts).
uint64_t config_hash(const Config& config) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : config.to_yaml()) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

void install_interrupt_handler() {
  std::signal(SIGINT, on_interrupt);
  std::signal(SIGTERM, on_interrupt);
  // mpirun forwards SIGUSR1 to every rank (and ends the job on SIGINT).
  std::signal(SIGUSR1, on_interrupt);
}

bool interrupt_requested() { return g_interrupts.load() > 0; }

// A batch in the executor's input arrays.
struct FedBatch {
  NDArray label;  // as the network takes it
  int real = 0;   // samples that are not padding
  // Per device (one executor each): its labels and samples that are not padding.
  std::vector<NDArray> labels;
  std::vector<int> reals;
  int share = 0;  // samples per device
};

struct Trainer::State {
  Config config;
  TrainOptions options;
  TrainSettings settings;
  graph::Symbol symbol;
  std::unique_ptr<DataIter> train_data, val_data;
  std::unique_ptr<Executor> exe;                    // the first device's
  std::vector<std::unique_ptr<Executor>> replicas;  // the other devices'
  std::vector<std::string> param_names;             // optimizer indices
  CarriedStates carried;  // recurrent states taken from one batch to the next
  // The job this process trains in (one process, or a worker of a
  // distributed job) and where the optimizer runs.
  std::unique_ptr<kvstore::Coordinator> job;
  std::unique_ptr<ParameterUpdates> updates;

  std::optional<RunDir> run;
  TrainerState position;  // what a checkpoint records
  int skip_batches = 0;   // of the first epoch: trained before an interrupt
  std::optional<int64_t> batches_per_epoch;
  std::unique_ptr<metric::CompositeMetric> train_metric, val_metric;
  NonFiniteWatch watch;
  LossScaler scaler;    // train.loss_scale
  StepProfile profile;  // MX_STEP_PROFILE
  bool labels_checked = false;
  bool interrupted = false;
  // train.max_time and train.early_stop, and what the run says at its end.
  double started = 0;  // ProgressDisplay::steady_clock's seconds
  std::optional<EarlyStop> early_stop;
  RunSummary summary;
  int last_checkpoint = -1;  // the newest checkpoint's epoch number (-1: none)

  std::vector<Executor*> executors() const {
    std::vector<Executor*> all{exe.get()};
    for (const auto& r : replicas) all.push_back(r.get());
    return all;
  }
  // Each executor's outputs for the samples of a batch that are not padding.
  void update_metric(metric::CompositeMetric& metric, const FedBatch& fed) const;

  // The network's parameters (arguments other than data and label) by name.
  std::map<std::string, NDArray> params() const {
    std::map<std::string, NDArray> m;
    for (const auto& n : param_names) m[n] = exe->arg_dict().at(n);
    return m;
  }

  void build(const Config& config);
  void train_epochs();
  void open_run();
  // Whether to stop within the epoch: Ctrl-C, or train.max_time used up,
  // here or on any other worker (one allreduce a batch in a distributed
  // job, so that all workers stop after the same batch).
  enum class StopCause { kNone, kInterrupt, kTimeUp };
  StopCause stop_cause() const;
  void start_epoch(int epoch, int first_epoch);
  FedBatch feed_batch(const DataBatch& batch);
  void check_labels(const NDArray& label);
  void train_step(const FedBatch& batch);
  bool loss_scaled_step_applies();
  void stop_within_epoch(int epoch, EpochProgress& progress, const std::string& why);
  // Returns true when train.early_stop ends the run after this epoch.
  bool end_epoch(int epoch, EpochProgress& progress);
  void say_summary();
  std::vector<metric::MetricValue> validate();
  // A metric's values over every worker's samples (each worker saw its
  // shard); `samples`, when given, becomes the sum of every worker's.
  std::vector<metric::MetricValue> over_workers(const metric::CompositeMetric& metric,
                                                int64_t* samples = nullptr);
  int64_t epoch_samples = 0;  // trained by this process in this epoch
  // Everything the run writes goes through these three and RunDir::say, so
  // that which process of a run writes is decided in one place.
  void save_checkpoint(int epoch, int batches_done);
  void log_epoch(int epoch, int64_t samples, const std::vector<metric::MetricValue>& train_values,
                 const std::vector<metric::MetricValue>& val_values, double seconds);
};

Trainer::Trainer(Config config, TrainOptions options) : s_(std::make_unique<State>()) {
  State& s = *s_;
  s.config = std::move(config);
  s.options = std::move(options);
  s.settings = parse_train_settings(s.config);
  // The optimizer's and schedule's values are checked before any data is read.
  make_configured_optimizer(s.config, s.settings.batch_size);
  check_config_values(s.config, s.settings);  // data, initializer, metrics
  // Before the data: the job decides the shards. A dist store joins the
  // workers and servers (MPI start-up; a StartupError ends every rank).
  s.job = s.options.inspect_only
              ? kvstore::single_process()
              : kvstore::join_job(s.settings.kvstore, static_cast<int>(s.settings.devices.size()),
                                  config_hash(s.config));
  try {
    s.build(s.config);
  } catch (const std::exception& e) {
    s.job->fail(e);
  }
}

void Trainer::State::build(const Config& c) {
  LayerOrigins origins;
  symbol = load_network(c, &origins);
  resolve_inputs(symbol, settings);
  carried = CarriedStates(symbol);
  // The network's shapes are checked before the data is read where the
  // config gives the data's shape, else with the iterator's.
  const std::optional<Shape> data_shape = configured_data_shape(c, settings);
  if (data_shape) check_network_takes(symbol, settings, *data_shape, origins);
  const DataShard shard{job->rank(), job->num_workers()};
  train_data = make_train_data(c, settings, shard);
  if (!data_shape) check_network_takes(symbol, settings, train_data->data_shape(), origins);
  val_data = make_val_data(c, settings, shard);
  // Several devices: one executor each, sharing nothing but the kvstore.
  const auto devices = static_cast<int64_t>(settings.devices.size());
  const int64_t share = devices > 1 ? settings.batch_size / devices : 0;
  exe = bind_for_training(symbol, settings, *train_data, settings.devices[0], share);
  for (int64_t d = 1; d < devices; ++d)
    replicas.push_back(bind_for_training(symbol, settings, *train_data,
                                         settings.devices[static_cast<size_t>(d)], share));
  param_names = parameter_names(symbol, settings);
  initialize_parameters(c, settings, symbol, *exe, param_names);  // resuming loads over it
  updates = make_parameter_updates(c, symbol, param_names, settings, executors(), *job);
  scaler = LossScaler(settings.loss_scale);
  train_metric = metric::make_composite(settings.metric_names);  // unknown names fail here
  val_metric = metric::make_composite(settings.metric_names);
}

Trainer::~Trainer() = default;

bool Trainer::interrupted() const { return s_->interrupted; }
const std::string& Trainer::run_dir() const {
  static const std::string none;
  return s_->run ? s_->run->path() : none;
}

void Trainer::train() {
  State& s = *s_;
  try {
    s.train_epochs();
  } catch (const std::exception& e) {
    s.job->fail(e);
  }
  if (s.run && s.run->writes()) s.say_summary();
  // Every worker meets the others and tells the servers it is done (also
  // after an interrupt: the servers then exit and mpirun returns).
  s.job->finish();
}

void Trainer::State::train_epochs() {
  open_run();
  started = ProgressDisplay::steady_clock()();
  if (settings.stop.early_stop) early_stop.emplace(*settings.stop.early_stop);
  summary = RunSummary(settings.stop.early_stop);
  const int first_epoch = position.epoch;
  for (int epoch = first_epoch; epoch < settings.epochs; ++epoch) {
    start_epoch(epoch, first_epoch);
    // Workers of a distributed run train the same number of batches (the
    // smallest shard's), so no worker waits for pushes that never come.
    const std::optional<int64_t> agreed = job->agree_on_batches(train_data->batches_per_epoch());
    const bool live = options.progress_bar && run->writes();
    EpochProgress progress(
        epoch, settings.epochs,
        agreed              ? agreed
        : batches_per_epoch ? batches_per_epoch
                            : train_data->batches_per_epoch(),
        settings.log_interval,
        ProgressDisplay(std::cerr, live, live ? terminal_width(STDERR_FILENO) : 80));
    if (run->writes())
      progress.on_interval([&](const IntervalPoint& p) { run->append_interval(interval_json(p)); });
    while (!agreed || progress.batches() < *agreed) {
      profile.begin_step();
      auto batch = train_data->next();
      profile.mark(StepProfile::kData);
      // Without an agreed count, every worker stops when any worker's data ends.
      if (!agreed && !job->on_all(batch.has_value())) break;
      if (!batch) {
        if (agreed)
          throw InputError(str("the training data of worker ", job->rank(), " ended after ",
                               progress.batches(), " batches, before the ", *agreed,
                               " it announced"));
        break;
      }
      if (skip_batches > 0) {
        --skip_batches;
        progress.skip();
        continue;
      }
      const FedBatch fed = feed_batch(*batch);
      profile.mark(StepProfile::kCopyIn);
      train_step(fed);
      epoch_samples += fed.real;
      watch.watch(exe->outputs()[0], progress.batches(), settings.ctx);
      profile.mark(StepProfile::kWatch);
      watch.throw_if_seen(*exe, epoch);
      if (scaler.on()) progress.set_loss_scale(scaler.scale(), scaler.skipped_steps());
      if (run->writes())
        progress.trained(fed.real, *train_metric);
      else
        progress.skip();
      if (const StopCause cause = stop_cause(); cause != StopCause::kNone) {
        interrupted = cause == StopCause::kInterrupt;
        stop_within_epoch(epoch, progress,
                          interrupted
                              ? "interrupted"
                              : str("train.max_time (", format_duration(*settings.stop.max_seconds),
                                    ") used up"));
        return;
      }
    }
    if (profile.on()) run->say(profile.report_and_reset());
    if (end_epoch(epoch, progress)) return;
  }
}

Trainer::State::StopCause Trainer::State::stop_cause() const {
  const bool time_up = settings.stop.max_seconds &&
                       ProgressDisplay::steady_clock()() - started > *settings.stop.max_seconds;
  const std::vector<bool> any = job->on_any({interrupt_requested(), time_up});
  return any[0] ? StopCause::kInterrupt : any[1] ? StopCause::kTimeUp : StopCause::kNone;
}

// The run directory, and for --resume the parameters, optimizer state and
// position of the checkpoint.
void Trainer::State::open_run() {
  // Worker 0 alone writes the run of a distributed job.
  run = RunDir::open(config, options, settings.prefix_name, job->rank() == 0);
  position = TrainerState{};
  position.seed = settings.seed;
  std::optional<std::string> states;
  if (const auto& from = run->resume_from()) {
    load_checkpoint_params(from->params(), params(), exe->aux_dict());
    copy_aux_states(executors());
    position = load_trainer_state(from->trainer());
    if (position.loss_scale) scaler.restore(*position.loss_scale);
    states = from->states();
    skip_batches = position.batches_done;
    last_checkpoint = from->epoch;
    run->say(str("resumed from ", from->params(), " (epoch ", position.epoch,
                 skip_batches ? str(", batch ", skip_batches) : std::string(), ")"));
  }
  updates->start(states, position.num_update);
  if (scaler.on()) set_loss_scale_inputs(executors(), scaler.scale());
  run->say(str("run directory: ", run->path()));
}

void Trainer::State::start_epoch(int epoch, int first_epoch) {
  // The iterator's order in epoch e comes from e resets (a resumed run
  // catches up on the ones it did not see).
  for (int r = epoch == first_epoch ? 0 : epoch - 1; r < epoch; ++r) train_data->reset();
  // Dropout and other random operators: a sequence that depends only on the
  // seed and the epoch, so a resumed run matches an uninterrupted one.
  op::ResourceManager::get().seed(settings.seed * 1000003ull + static_cast<uint64_t>(epoch));
  for (Executor* e : executors()) carried.reset(*e);
  train_metric->reset();
  epoch_samples = 0;
}

// Copies a batch into the executor's data and label arrays; iterators give
// (batch, 1) labels where a loss layer may take (batch,).
FedBatch Trainer::State::feed_batch(const DataBatch& batch) {
  FedBatch fed;
  fed.real = static_cast<int>(batch.data.shape()[0]) - batch.pad;
  const auto all = executors();
  const int share = static_cast<int>(batch.data.shape()[0] / static_cast<int64_t>(all.size()));
  for (size_t k = 0; k < all.size(); ++k) {
    NDArray data_arg = all[k]->arg_dict().at(settings.data_name);
    NDArray label_arg = all[k]->arg_dict().at(settings.label_name);
    const int first = static_cast<int>(k) * share;
    const bool whole = all.size() == 1;
    NDArray data = whole ? batch.data : batch.data.slice(first, first + share);
    NDArray label = whole ? batch.label : batch.label.slice(first, first + share);
    data.copy_to(data_arg);
    if (label.shape() != label_arg.shape()) label = label.reshape(label_arg.shape());
    label.copy_to(label_arg);
    fed.labels.push_back(label);
    fed.reals.push_back(std::clamp(fed.real - first, 0, share));
  }
  fed.label = fed.labels[0];
  fed.share = share;
  return fed;
}

void Trainer::State::update_metric(metric::CompositeMetric& metric, const FedBatch& fed) const {
  const auto all = executors();
  for (size_t k = 0; k < all.size(); ++k)
    if (fed.reals[k] > 0)
      metric.update({real_rows(fed.labels[k], fed.reals[k], fed.share)},
                    {real_rows(all[k]->outputs()[0], fed.reals[k], fed.share)});
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

// One step: forward, backward, update (which train.loss_scale may skip), metrics.
void Trainer::State::train_step(const FedBatch& batch) {
  if (!labels_checked) check_labels(batch.label);
  for (Executor* e : executors()) e->forward(true);
  profile.mark(StepProfile::kForward);
  for (Executor* e : executors()) e->backward();
  profile.mark(StepProfile::kBackward);
  if (!scaler.on() || loss_scaled_step_applies()) updates->step();
  // After the backward pass, which reads the states this batch started from.
  for (Executor* e : executors()) carried.carry(*e);
  profile.mark(StepProfile::kUpdate);
  update_metric(*train_metric, batch);
  profile.mark(StepProfile::kMetric);
}

// With train.loss_scale: the gradients divided by the scale the backward pass
// ran with, and whether the step may update (a dynamic scale skips a step
// whose gradients overflowed on any device: no update, no optimizer state
// or counter change). The check waits for the backward pass, so a dynamic
// scale's updates start after it rather than overlapping it.
bool Trainer::State::loss_scaled_step_applies() {
  const double used = scaler.scale();
  // The float32 the graph multiplied by (kLossScaleInput).
  const double divisor = static_cast<float>(used);
  const bool finite = !scaler.dynamic() || gradients_finite(executors(), param_names);
  if (finite && !updates->divide_gradients_by(divisor))
    divide_gradients(executors(), param_names, divisor);
  const int64_t step = updates->num_update() + scaler.skipped_steps() + 1;
  const bool apply = scaler.after_backward(finite, step);
  if (scaler.scale() != used) set_loss_scale_inputs(executors(), scaler.scale());
  return apply;
}

// Ctrl-C or train.max_time: a checkpoint of the position within the epoch,
// to resume from. Every worker of a distributed run comes here after the
// same batch; the barrier lets every worker's pushes reach the servers
// before worker 0 has them save their optimizer states.
void Trainer::State::stop_within_epoch(int epoch, EpochProgress& progress, const std::string& why) {
  job->barrier();
  average_aux_states(executors(), *job);
  save_checkpoint(epoch, static_cast<int>(progress.batches()));
  progress.end_line();
  const CheckpointPaths paths = run->checkpoint(epoch);
  run->say(str(why, " in epoch ", epoch + 1, " after batch ", progress.batches(), "; checkpoint ",
               paths.params(),
               "; continue with: ", job->distributed() ? "the same mpirun command with " : "",
               "mx-train --resume ", paths.params_base()));
}

bool Trainer::State::end_epoch(int epoch, EpochProgress& progress) {
  batches_per_epoch = progress.batches();
  progress.end_line();
  // The metric waits for the epoch's last operations: time after it.
  int64_t samples = epoch_samples;
  const auto train_values = over_workers(*train_metric, &samples);
  const double seconds = progress.seconds();
  average_aux_states(executors(), *job);  // what validation and the checkpoint use
  const auto val_values = validate();
  log_epoch(epoch, samples, train_values, val_values, seconds);
  summary.record(epoch + 1, train_values, val_values);
  const std::optional<std::string> stop =
      early_stop ? early_stop->after_epoch(epoch + 1, train_values, val_values) : std::nullopt;
  const bool last = epoch + 1 == settings.epochs;
  // An early stop keeps a checkpoint of where it stopped.
  if (stop ||
      (settings.checkpoint_every > 0 && ((epoch + 1) % settings.checkpoint_every == 0 || last))) {
    save_checkpoint(epoch + 1, 0);
    if (run->writes()) prune_checkpoints(run->prefix(), settings.keep_checkpoints);
  }
  if (stop && !last) {
    run->say(str(*stop, "; stopped after epoch ", epoch + 1, "/", settings.epochs, "; checkpoint ",
                 run->checkpoint(epoch + 1).params()));
    return true;
  }
  return false;
}

void Trainer::State::say_summary() {
  for (const auto& line :
       summary.lines(run->path(), run->prefix(), last_checkpoint, predict_inputs_for(config)))
    run->say(line);
}

std::vector<metric::MetricValue> Trainer::State::validate() {
  if (!val_data) return {};
  const Shape train_shape = train_data->data_shape();
  val_data->reset();
  val_metric->reset();
  for (Executor* e : executors()) carried.reset(*e);
  while (auto batch = val_data->next()) {
    if (batch->data.shape() != train_shape)
      throw InputError(str("validation batches ", batch->data.shape().to_string(),
                           " differ from training batches ", train_shape.to_string(),
                           "; use the same batch size and shape"));
    const FedBatch fed = feed_batch(*batch);
    for (Executor* e : executors()) {
      e->forward(false);
      carried.carry(*e);
    }
    update_metric(*val_metric, fed);
  }
  return over_workers(*val_metric);
}

std::vector<metric::MetricValue> Trainer::State::over_workers(const metric::CompositeMetric& metric,
                                                              int64_t* samples) {
  std::vector<double> sums;
  std::vector<metric::MetricValue> values;
  std::vector<const metric::EvalMetric*> metrics;
  for (size_t i = 0; i < metric.size(); ++i) {
    const auto& m = dynamic_cast<const metric::EvalMetric&>(metric.at(i));
    metrics.push_back(&m);
    sums.push_back(m.sum_metric());
    sums.push_back(static_cast<double>(m.num_inst()));
    values.push_back({m.name(), 0});
  }
  sums.push_back(samples != nullptr ? static_cast<double>(*samples) : 0.0);
  sums = job->allreduce(sums, kvstore::Reduce::kSum);
  for (size_t i = 0; i < values.size(); ++i)
    values[i].value = metrics[i]->value_from(sums[2 * i], sums[2 * i + 1]);
  if (samples != nullptr) *samples = static_cast<int64_t>(sums.back());
  return values;
}

void Trainer::State::save_checkpoint(int epoch, int batches_done) {
  position.epoch = epoch;
  position.batches_done = batches_done;
  last_checkpoint = epoch;
  position.num_update = updates->num_update();
  position.loss_scale = scaler.on() ? std::optional<LossScaleState>(scaler.state()) : std::nullopt;
  if (!run->writes()) return;
  const CheckpointPaths paths = run->checkpoint(epoch);
  // The optimizer states first (a store's servers write theirs): a
  // checkpoint whose parameters exist is complete.
  updates->save_states(paths.states());
  train::save_checkpoint(paths, symbol, params(), exe->aux_dict(), position);
}

void Trainer::State::log_epoch(int epoch, int64_t samples,
                               const std::vector<metric::MetricValue>& train_values,
                               const std::vector<metric::MetricValue>& val_values, double seconds) {
  const double lr = updates->learning_rate();
  const double rate = static_cast<double>(samples) / std::max(seconds, 1e-9);
  char lr_text[32];
  std::snprintf(lr_text, sizeof lr_text, "%.6g", lr);
  run->say(
      str("epoch ", epoch + 1, "/", settings.epochs, ":", metrics_text(train_values, "train-"),
          metrics_text(val_values, "val-"), " lr ", lr_text, " time ", format_duration(seconds),
          " (", static_cast<int64_t>(rate), " samples/s)",
          scaler.on() ? loss_scale_text(scaler.scale(), scaler.skipped_steps()) : std::string()));
  nlohmann::json line{{"epoch", epoch + 1},
                      {"train", metrics_json(train_values)},
                      {"val", metrics_json(val_values)},
                      {"seconds", seconds},
                      {"samples_per_sec", rate},
                      {"learning_rate", lr}};
  if (scaler.on()) {
    line["loss_scale"] = scaler.scale();
    line["skipped_steps"] = scaler.skipped_steps();
  }
  run->append_metrics(line.dump());
  if (run->writes()) redraw_run_curves(run->path());
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
  // Timed as the run trains: in its precision, the AMP pass's casts included.
  const graph::Symbol trained =
      apply_precision(s_->symbol, s_->settings.precision, s_->settings.devices);
  benchmark_network(out, iterations, describe_input(trained, *s_->exe, s_->settings));
}

}  // namespace mx::train
