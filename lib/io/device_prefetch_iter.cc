#include "io/device_prefetch_iter.h"

#include "base/error.h"

namespace mx {

namespace {

// `buffer`, reallocated when the batch's shape or dtype changed.
NDArray& fit(NDArray& buffer, const NDArray& like, Context ctx) {
  if (buffer.is_none() || buffer.shape() != like.shape() || buffer.dtype() != like.dtype())
    buffer = NDArray(like.shape(), ctx, like.dtype());
  return buffer;
}

}  // namespace

Context pinned_context_for(Context device) {
  return {DeviceType::kCPUPinned, device.is_gpu() ? device.id : 0};
}

DevicePrefetchIter::DevicePrefetchIter(std::unique_ptr<DataIter> inner, Context target)
    : inner_(std::move(inner)), target_(target) {
  MX_CHECK(inner_ != nullptr);
  if (!target_.is_gpu() && target_.type != DeviceType::kCPUPinned)
    throw Error("DevicePrefetchIter: the target must be a GPU or cpu_pinned, not " +
                target_.to_string());
}

std::optional<DataBatch> DevicePrefetchIter::stage(std::optional<DataBatch> batch) {
  if (!batch) return std::nullopt;
  Buffers& b = buffers_[turn_];
  turn_ = (turn_ + 1) % buffers_.size();
  const Context pinned = pinned_context_for(target_);
  DataBatch out;
  out.pad = batch->pad;
  out.index = std::move(batch->index);
  batch->data.copy_to(fit(b.pinned_data, batch->data, pinned));
  batch->label.copy_to(fit(b.pinned_label, batch->label, pinned));
  if (target_.is_gpu()) {
    b.pinned_data.copy_to(fit(b.data, batch->data, target_));  // the copy stream
    b.pinned_label.copy_to(fit(b.label, batch->label, target_));
    out.data = b.data;
    out.label = b.label;
  } else {
    out.data = b.pinned_data;
    out.label = b.pinned_label;
  }
  return out;
}

std::optional<DataBatch> DevicePrefetchIter::next() {
  if (!started_) {
    ahead_ = stage(inner_->next());
    started_ = true;
  }
  std::optional<DataBatch> current = std::move(ahead_);
  ahead_.reset();
  if (current) ahead_ = stage(inner_->next());  // overlaps the caller's step
  return current;
}

void DevicePrefetchIter::reset() {
  inner_->reset();
  ahead_.reset();
  started_ = false;
}

}  // namespace mx
