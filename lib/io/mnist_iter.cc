#include "io/mnist_iter.h"

#include "base/logging.h"
#include "io/epoch_order.h"
#include "io/memory_batch.h"

namespace mx {

void MNISTIterParam::declare(ParamDecl<MNISTIterParam>& d) {
  using P = MNISTIterParam;
  d.field("image", &P::image)
      .set_default("./train-images-idx3-ubyte")
      .describe("IDX file of images (n, rows, cols), plain or .gz");
  d.field("label", &P::label)
      .set_default("./train-labels-idx1-ubyte")
      .describe("IDX file of labels (n), plain or .gz");
  d.field("batch_size", &P::batch_size)
      .set_default(128)
      .set_lower_bound(1)
      .describe("images per batch");
  d.field("shuffle", &P::shuffle).set_default(true).describe("a new random order every epoch");
  d.field("flat", &P::flat)
      .set_default(false)
      .describe("batches of shape (batch, rows*cols) instead of (batch, 1, rows, cols)");
  d.field("seed", &P::seed).set_default(0).describe("seed of the shuffle");
  d.field("silent", &P::silent).set_default(false).describe("do not log what was loaded");
  declare_shard_fields(d);
  d.field("round_batch", &P::round_batch)
      .set_default(true)
      .describe("complete the last batch from the start of the epoch (else pad it with zeros)");
}

MNISTIter::MNISTIter(const MNISTIterParam& param) : param_(param) {
  if (param_.part_index >= param_.num_parts)
    throw InputError(str("MNISTIter: part_index ", param_.part_index, " must be below num_parts ",
                         param_.num_parts));
  images_ = read_idx(param_.image);
  labels_ = read_idx(param_.label);
  if (images_.dims.size() != 3)
    throw InputError(str(param_.image, ": ", images_.dims.size(),
                         " dimensions; MNISTIter needs images of shape (n, rows, cols)"));
  if (labels_.dims.size() != 1)
    throw InputError(str(param_.label, ": ", labels_.dims.size(),
                         " dimensions; MNISTIter needs labels of shape (n)"));
  if (images_.items() != labels_.items())
    throw InputError(str(param_.image, " has ", images_.items(), " images but ", param_.label,
                         " has ", labels_.items(), " labels"));
  if (!param_.silent) {
    MX_LOG(kInfo) << "MNISTIter: " << images_.items() << " images of " << images_.dims[1] << "x"
                  << images_.dims[2] << " from " << param_.image;
  }
  start_epoch();
}

Shape MNISTIter::data_shape() const {
  if (param_.flat) return Shape{param_.batch_size, images_.dims[1] * images_.dims[2]};
  return Shape{param_.batch_size, 1, images_.dims[1], images_.dims[2]};
}

Shape MNISTIter::label_shape() const { return Shape{param_.batch_size}; }

void MNISTIter::start_epoch() {
  order_ = epoch_order(static_cast<uint64_t>(images_.items()), param_.part_index, param_.num_parts,
                       param_.shuffle, static_cast<uint64_t>(param_.seed), epoch_);
  batch_ = 0;
}

std::optional<DataBatch> MNISTIter::next() {
  const size_t pixels = static_cast<size_t>(images_.item_size());
  const MemoryBatchLayout layout{static_cast<uint64_t>(param_.batch_size),
                                 param_.round_batch,
                                 pixels,
                                 1,
                                 data_shape(),
                                 label_shape()};
  return next_memory_batch(order_, batch_, layout,
                           [&](uint64_t example, float* data, float* label) {
                             const uint8_t* src = images_.data.data() + example * pixels;
                             for (size_t p = 0; p < pixels; ++p) data[p] = src[p] * (1.0f / 256.0f);
                             *label = labels_.data[example];
                           });
}

void MNISTIter::reset() {
  ++epoch_;
  start_epoch();
}

}  // namespace mx
