// Batches for a GPU: wraps an iterator and puts each batch into pinned
// (page-locked) host memory and, for a GPU target, onto the GPU, with the
// host-to-device copy pushed on the GPU's copy stream. The next batch is
// read and its copies pushed as soon as the current one is handed out, so
// they overlap the current step's compute. Two buffer sets alternate, so a
// batch's arrays are refilled during the next call to next(): operations
// pushed on them before that call still see the batch (the engine orders
// the refill after them), reads after it do not.
#pragma once

#include <array>
#include <memory>
#include <optional>

#include "io/data_iter.h"

namespace mx {

class DevicePrefetchIter : public DataIter {
 public:
  // `target`: a GPU (batches end there) or cpu_pinned:N (batches stay in
  // pinned host memory, for several GPUs that each copy their share).
  DevicePrefetchIter(std::unique_ptr<DataIter> inner, Context target);

  std::optional<DataBatch> next() override;
  void reset() override;
  Shape data_shape() const override { return inner_->data_shape(); }
  Shape label_shape() const override { return inner_->label_shape(); }
  std::optional<int64_t> batches_per_epoch() const override { return inner_->batches_per_epoch(); }

  Context target() const { return target_; }

 private:
  struct Buffers {
    NDArray pinned_data, pinned_label;  // host staging
    NDArray data, label;                // on the target GPU (none for a pinned target)
  };
  // Pushes the copies of `batch` into the next buffer set; returns the batch
  // as it will be handed out.
  std::optional<DataBatch> stage(std::optional<DataBatch> batch);

  std::unique_ptr<DataIter> inner_;
  Context target_;
  bool started_ = false;
  std::optional<DataBatch> ahead_;  // the next batch, its copies pushed
  std::array<Buffers, 2> buffers_;
  size_t turn_ = 0;
};

// The pinned host context that feeds `device` (cpu_pinned:0 for a CPU).
Context pinned_context_for(Context device);

}  // namespace mx
