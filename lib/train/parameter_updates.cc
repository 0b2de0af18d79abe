#include "train/parameter_updates.h"

#include "engine/engine.h"
#include "train/gradient_clip.h"
#include "train/trainer_setup.h"

namespace mx::train {
namespace {

// One device, no store: the updater changes the parameters in place.
class InProcessUpdates : public ParameterUpdates {
 public:
  InProcessUpdates(std::unique_ptr<optim::Updater> updater, Executor& exe,
                   const std::vector<std::string>& param_names, const TrainSettings& settings)
      : updater_(std::move(updater)),
        exe_(exe),
        names_(param_names),
        ctx_(settings.ctx),
        clip_(settings.clip_global_norm),
        rescale_(updater_->optimizer().rescale_grad()) {}

  void start(const std::optional<std::string>& states, int64_t) override {
    if (states) updater_->load_states(*states, ctx_);  // the step count comes with them
  }
  void step() override {
    if (clip_) clip_global_norm({&exe_}, names_, *clip_, updater_->optimizer().rescale_grad());
    for (size_t i = 0; i < names_.size(); ++i)
      (*updater_)(static_cast<int>(i), exe_.grad_dict().at(names_[i]),
                  exe_.arg_dict().at(names_[i]));
  }
  void save_states(const std::string& path) override { updater_->save_states(path); }
  int64_t num_update() const override { return updater_->optimizer().num_update(); }
  double learning_rate() override { return updater_->optimizer().learning_rate(); }
  bool divide_gradients_by(double divisor) override {
    updater_->optimizer().set_rescale_grad(rescale_ / divisor);
    return true;
  }

 private:
  std::unique_ptr<optim::Updater> updater_;
  Executor& exe_;
  std::vector<std::string> names_;
  Context ctx_;
  std::optional<double> clip_;
  double rescale_;  // the configured rescale_grad (1 / batch size by default)
};

// A store sums the devices' (and workers') gradients and runs the optimizer
// where it keeps the values; each parameter is key i.
class StoreUpdates : public ParameterUpdates {
 public:
  StoreUpdates(kvstore::KVStore& store, std::unique_ptr<optim::Optimizer> optimizer,
               std::unique_ptr<optim::Optimizer> schedule, std::vector<Executor*> executors,
               const std::vector<std::string>& param_names, const TrainSettings& settings)
      : store_(store),
        optimizer_(std::move(optimizer)),
        schedule_(std::move(schedule)),
        executors_(std::move(executors)),
        names_(param_names),
        compression_(settings.compression.spec()),
        overlap_(settings.kvstore.overlap),
        clip_(settings.clip_global_norm) {}

  // The store starts from the first executor's parameters (in a distributed
  // job worker 0's reach the servers) and every executor pulls them.
  void start(const std::optional<std::string>& states, int64_t num_update) override {
    store_.set_gradient_compression(compression_);
    std::vector<int> keys;
    std::vector<NDArray> weights;
    std::vector<std::vector<NDArray>> outputs;
    for (size_t i = 0; i < names_.size(); ++i) {
      keys.push_back(static_cast<int>(i));
      weights.push_back(executors_[0]->arg_dict().at(names_[i]));
      outputs.emplace_back();
      for (Executor* e : executors_) outputs.back().push_back(e->arg_dict().at(names_[i]));
    }
    store_.init(keys, weights);
    store_.set_optimizer(std::move(optimizer_));
    if (states) store_.load_optimizer_states(*states);
    store_.pull(keys, outputs);
    Engine::get().wait_all();
    num_update_ = num_update;
  }

  void step() override {
    if (!overlap_) Engine::get().wait_all();  // the whole backward pass first
    // The devices' gradients summed are the batch's: scaling each by the
    // same factor scales the sum (a distributed job refuses the option).
    if (clip_) clip_global_norm(executors_, names_, *clip_, schedule_->rescale_grad());
    // Last layer first: its gradient is ready first, and the priorities
    // bring the first layers' weights back first for the next forward pass.
    // Keys the store packs go together after the others (one message per
    // server each way): they wait for the first layer's gradient, the last
    // one made, and the first layer's weights are what the next forward
    // pass needs first anyway.
    std::vector<int> packed;
    std::vector<std::vector<NDArray>> packed_grads, packed_weights;
    for (int i = static_cast<int>(names_.size()) - 1; i >= 0; --i) {
      const auto& name = names_[static_cast<size_t>(i)];
      std::vector<NDArray> grads, weights;
      for (Executor* e : executors_) {
        grads.push_back(e->grad_dict().at(name));
        weights.push_back(e->arg_dict().at(name));
      }
      if (store_.packs(i)) {
        packed.push_back(i);
        packed_grads.push_back(std::move(grads));
        packed_weights.push_back(std::move(weights));
        continue;
      }
      store_.push({i}, {grads}, -i);
      store_.pull({i}, {weights}, -i);
    }
    if (!packed.empty()) {
      store_.push(packed, packed_grads, -packed.back());
      store_.pull(packed, packed_weights, -packed.back());
    }
    if (!overlap_) Engine::get().wait_all();
    ++num_update_;
  }

  void save_states(const std::string& path) override { store_.save_optimizer_states(path); }
  int64_t num_update() const override { return num_update_; }
  // The optimizer runs in the store: the schedule at this worker's step count.
  double learning_rate() override {
    optim::LRScheduler* schedule = schedule_->lr_scheduler();
    return schedule != nullptr ? (*schedule)(num_update_) : schedule_->learning_rate();
  }

 private:
  kvstore::KVStore& store_;
  std::unique_ptr<optim::Optimizer> optimizer_;  // until start() hands it to the store
  std::unique_ptr<optim::Optimizer> schedule_;   // reports the learning rate
  std::vector<Executor*> executors_;
  std::vector<std::string> names_;
  kvstore::CompressionSpec compression_;
  bool overlap_;
  std::optional<double> clip_;
  int64_t num_update_ = 0;
};

}  // namespace

std::unique_ptr<ParameterUpdates> make_parameter_updates(
    const Config& config, const graph::Symbol& network, const std::vector<std::string>& param_names,
    const TrainSettings& settings, std::vector<Executor*> executors, kvstore::Coordinator& job) {
  kvstore::KVStore* store = job.kvstore();
  if (store == nullptr)
    return std::make_unique<InProcessUpdates>(
        make_updater(config, network, param_names, settings.batch_size), *executors[0], param_names,
        settings);
  // The gradients of one step are summed over the devices and, in
  // dist_sync, the workers: the rescale is 1 / the batch they came from.
  return std::make_unique<StoreUpdates>(
      *store,
      make_optimizer(config, network, param_names, settings.batch_size * job.workers_per_update()),
      make_optimizer(config, network, param_names, settings.batch_size), std::move(executors),
      param_names, settings);
}

}  // namespace mx::train
