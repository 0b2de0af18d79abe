#include "io/image_record_iter.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "base/logging.h"
#include "base/threads.h"
#include "io/epoch_order.h"
#include "io/image_probe.h"
#include "io/recordio_errors.h"
#include "recordio/image_record.h"

namespace mx {

void ImageRecordIterParam::declare(ParamDecl<ImageRecordIterParam>& d) {
  using P = ImageRecordIterParam;
  d.field("path_imgrec", &P::path_imgrec).describe("the .rec file of image records");
  d.field("path_imgidx", &P::path_imgidx)
      .set_default("")
      .describe("its .idx; needed for a global shuffle (built by scanning the .rec if absent)");
  d.field("data_shape", &P::data_shape)
      .describe("(channels, height, width) of one image; channels 1 or 3");
  d.field("label_width", &P::label_width)
      .set_default(1)
      .set_lower_bound(1)
      .describe("labels per image");
  d.field("batch_size", &P::batch_size).set_lower_bound(1).describe("images per batch");
  d.field("shuffle", &P::shuffle).set_default(false).describe("a new random order every epoch");
  d.field("seed", &P::seed).set_default(0).describe("seed of the shuffle and the augmentation");
  d.field("part_index", &P::part_index)
      .set_default(0)
      .set_lower_bound(0)
      .describe("this worker's shard, in [0, num_parts)");
  d.field("num_parts", &P::num_parts)
      .set_default(1)
      .set_lower_bound(1)
      .describe("number of disjoint shards (distributed workers)");
  d.field("round_batch", &P::round_batch)
      .set_default(true)
      .describe("complete the last batch from the start of the epoch (else pad it with zeros)");
  d.field("resize", &P::resize)
      .set_default(-1)
      .describe("resize the shorter side to this before cropping; -1 keeps the size");
  d.field("rand_crop", &P::rand_crop).set_default(false).describe("random instead of center crop");
  d.field("rand_mirror", &P::rand_mirror)
      .set_default(false)
      .describe("mirror half of the images horizontally");
  d.field("mean_r", &P::mean_r).set_default(0.0f).describe("subtracted from red");
  d.field("mean_g", &P::mean_g).set_default(0.0f).describe("subtracted from green");
  d.field("mean_b", &P::mean_b).set_default(0.0f).describe("subtracted from blue");
  d.field("std_r", &P::std_r).set_default(1.0f).describe("red is divided by this");
  d.field("std_g", &P::std_g).set_default(1.0f).describe("green is divided by this");
  d.field("std_b", &P::std_b).set_default(1.0f).describe("blue is divided by this");
  d.field("scale", &P::scale).set_default(1.0f).describe("multiplies (pixel - mean) / std");
  d.field("preprocess_threads", &P::preprocess_threads)
      .set_default(0)
      .set_lower_bound(0)
      .describe("decoding threads; 0 uses the thread budget (MX_NUM_THREADS)");
  d.field("prefetch_buffer", &P::prefetch_buffer)
      .set_default(4)
      .set_lower_bound(1)
      .describe("decoded batches kept ready ahead of the consumer");
  d.field("bad_record", &P::bad_record)
      .set_default(BadRecordPolicy::kStop)
      .add_enum("stop", BadRecordPolicy::kStop)
      .add_enum("skip", BadRecordPolicy::kSkip)
      .describe(
          "on a damaged record or undecodable image: stop with an error, or skip and count it");
}

ImageRecordIter::ImageRecordIter(const ImageRecordIterParam& param) : param_(param) {
  const std::string owner = "ImageRecordIter '" + param_.path_imgrec + "'";
  const Shape& s = param_.data_shape;
  if (s.ndim() != 3 || (s[0] != 1 && s[0] != 3) || s[1] <= 0 || s[2] <= 0)
    throw InputError(owner + ": data_shape " + s.to_string() +
                     " must be (channels, height, width) with 1 or 3 channels");
  if (param_.part_index >= param_.num_parts)
    throw InputError(str(owner, ": part_index ", param_.part_index, " must be below num_parts ",
                         param_.num_parts));
  for (float v : {param_.std_r, param_.std_g, param_.std_b})
    if (v == 0) throw InputError(owner + ": std_r, std_g and std_b must not be 0");

  threads_ = param_.preprocess_threads > 0 ? param_.preprocess_threads : thread_budget();
  ImageAugmentConfig config;
  config.channels = static_cast<int>(s[0]);
  config.height = static_cast<int>(s[1]);
  config.width = static_cast<int>(s[2]);
  config.resize = param_.resize;
  config.rand_crop = param_.rand_crop;
  config.rand_mirror = param_.rand_mirror;
  const float mean[3] = {param_.mean_r, param_.mean_g, param_.mean_b};
  const float stdv[3] = {param_.std_r, param_.std_g, param_.std_b};
  std::copy(mean, mean + 3, config.mean);
  std::copy(stdv, stdv + 3, config.std);
  config.scale = param_.scale;
  for (int i = 0; i < threads_; ++i)
    augmenters_.push_back(std::make_unique<ImageAugmenter>(config));

  with_recordio_errors([&] {
    source_ = recordio::open_file(param_.path_imgrec);
    if (!param_.path_imgidx.empty()) {
      indexed_.emplace(source_, recordio::read_index(param_.path_imgidx), param_.path_imgidx);
    } else if (param_.shuffle) {
      const auto start = std::chrono::steady_clock::now();
      auto on_damage = [&](const recordio::FormatError& e) {
        ++damaged_regions_;
        MX_LOG(kWarning) << e.what() << " (skipped)";
      };
      auto entries = param_.bad_record == BadRecordPolicy::kSkip
                         ? recordio::scan_index(source_, on_damage)
                         : recordio::scan_index(source_);
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::steady_clock::now() - start)
                          .count();
      MX_LOG(kInfo) << param_.path_imgrec << ": no path_imgidx given; indexed " << entries.size()
                    << " records by scanning their headers in " << ms << " ms";
      indexed_.emplace(source_, std::move(entries), param_.path_imgrec + " (scanned)");
    }
  });
  start_epoch();
}

ImageRecordIter::~ImageRecordIter() = default;

Shape ImageRecordIter::data_shape() const {
  const Shape& s = param_.data_shape;
  return Shape{param_.batch_size, s[0], s[1], s[2]};
}

Shape ImageRecordIter::label_shape() const {
  if (param_.label_width == 1) return Shape{param_.batch_size};
  return Shape{param_.batch_size, param_.label_width};
}

void ImageRecordIter::bad_record(const std::string& message) {
  if (param_.bad_record == BadRecordPolicy::kStop) throw InputError(message);
  MX_LOG(kWarning) << message << " (skipped)";
}

std::optional<int64_t> ImageRecordIter::batches_per_epoch() const {
  if (!indexed_ || param_.bad_record == BadRecordPolicy::kSkip) return std::nullopt;
  return static_cast<int64_t>(batch_count(order_.size(), static_cast<uint64_t>(param_.batch_size)));
}

void ImageRecordIter::start_epoch() {
  pipeline_.reset();
  cursor_ = 0;
  produced_ = 0;
  first_records_.clear();
  epoch_done_ = false;
  reader_.reset();
  order_.clear();
  if (indexed_) {
    const auto& entries = indexed_->entries();
    std::vector<uint64_t> by_offset(entries.size());
    for (size_t i = 0; i < by_offset.size(); ++i) by_offset[i] = i;
    // Without shuffling read in file order, whatever the order of the .idx.
    std::stable_sort(by_offset.begin(), by_offset.end(),
                     [&](uint64_t a, uint64_t b) { return entries[a].offset < entries[b].offset; });
    for (uint64_t i : epoch_order(entries.size(), param_.part_index, param_.num_parts,
                                  param_.shuffle, static_cast<uint64_t>(param_.seed), epoch_))
      order_.push_back(by_offset[i]);
  } else {
    recordio::ReaderOptions options;
    const uint64_t size = source_->size();
    options.begin = size * static_cast<uint64_t>(param_.part_index) / param_.num_parts;
    options.end = size * static_cast<uint64_t>(param_.part_index + 1) / param_.num_parts;
    if (param_.bad_record == BadRecordPolicy::kSkip)
      options.on_damage = [this](const recordio::FormatError& e) {
        ++damaged_regions_;
        MX_LOG(kWarning) << e.what() << " (skipped)";
      };
    reader_ = with_recordio_errors(
        [&] { return std::make_unique<recordio::Reader>(source_, std::move(options)); });
  }
  pipeline_ = std::make_unique<Pipeline>(
      [this] { return next_raw_batch(); },
      [this](RawBatch&& raw, int worker) { return decode(std::move(raw), worker); }, threads_,
      param_.prefetch_buffer + threads_);
}

std::optional<ImageRecordIter::RawRecord> ImageRecordIter::next_record() {
  RawRecord record;
  if (reader_) {
    recordio::Record r;
    const bool got = with_recordio_errors([&] { return reader_->next(r); });
    if (!got) return std::nullopt;
    record.payload.assign(r.payload);
    record.offset = r.offset;
  } else {
    while (true) {
      if (cursor_ >= order_.size()) return std::nullopt;
      const uint64_t entry = order_[cursor_++];
      record.offset = indexed_->entries()[entry].offset;
      try {
        indexed_->read(entry, record.payload);
        break;
      } catch (const recordio::FormatError& e) {
        if (param_.bad_record == BadRecordPolicy::kStop) throw to_input_error(e);
        ++damaged_regions_;
        MX_LOG(kWarning) << e.what() << " (skipped)";
      }
    }
  }
  record.position = produced_++;
  return record;
}

std::optional<ImageRecordIter::RawBatch> ImageRecordIter::next_raw_batch() {
  if (epoch_done_) return std::nullopt;
  const size_t batch_size = static_cast<size_t>(param_.batch_size);
  RawBatch batch;
  while (batch.records.size() < batch_size) {
    auto record = next_record();
    if (!record) break;
    if (first_records_.size() < batch_size) first_records_.push_back(*record);
    batch.records.push_back(std::move(*record));
  }
  if (batch.records.size() < batch_size) {
    epoch_done_ = true;
    if (batch.records.empty()) return std::nullopt;
    batch.pad = static_cast<int>(batch_size - batch.records.size());
    if (param_.round_batch)
      for (size_t i = 0; batch.records.size() < batch_size; ++i) {
        RawRecord copy = first_records_[i % first_records_.size()];
        copy.position = produced_++;
        batch.records.push_back(std::move(copy));
      }
  }
  return batch;
}

std::optional<DataBatch> ImageRecordIter::decode(RawBatch&& raw, int worker) {
  ImageAugmenter& augmenter = *augmenters_[static_cast<size_t>(worker)];
  const size_t batch_size = static_cast<size_t>(param_.batch_size);
  const size_t width = static_cast<size_t>(param_.label_width);
  const size_t sample = static_cast<size_t>(param_.data_shape.size());
  DataBatch batch;
  batch.data = NDArray(data_shape());
  batch.label = NDArray(label_shape());
  batch.pad = raw.pad;
  batch.index.assign(batch_size, 0);
  float* data = batch.data.data<float>();
  float* label = batch.label.data<float>();
  std::vector<bool> good(batch_size, false);
  bool any_good = false;
  const std::string& file = param_.path_imgrec;

  for (size_t i = 0; i < raw.records.size(); ++i) {
    const RawRecord& record = raw.records[i];
    recordio::ImageRecordView view;
    try {
      view = recordio::parse_image_record(record.payload, file, record.offset);
    } catch (const recordio::FormatError& e) {
      ++bad_records_;
      bad_record(e.what());
      continue;
    }
    if (view.num_labels != width)
      throw InputError(str(file, ": byte ", record.offset, ": record id ", view.header.id, " has ",
                           view.num_labels, " label(s), but label_width is ", width,
                           "; set label_width to the number of labels packed per image"));
    Rng rng = Rng::derive({static_cast<uint64_t>(param_.seed), epoch_, record.position});
    if (!augmenter.decode_into(view.image, rng, data + i * sample)) {
      ++bad_records_;
      bad_record(str(file, ": byte ", record.offset, ": record id ", view.header.id,
                     ": cannot decode the image (", view.image.size(), " bytes, format ",
                     guess_image_format(view.image), ")"));
      continue;
    }
    for (size_t k = 0; k < width; ++k) label[i * width + k] = view.label(static_cast<uint32_t>(k));
    batch.index[i] = view.header.id;
    good[i] = true;
    any_good = true;
  }
  if (!any_good) return std::nullopt;
  // Slots without a record (the end of an epoch without round_batch) are zeros.
  for (size_t i = raw.records.size(); i < batch_size; ++i) {
    std::memset(data + i * sample, 0, sample * sizeof(float));
    std::memset(label + i * width, 0, width * sizeof(float));
  }
  // A skipped record's slot takes the next good image of the batch.
  for (size_t i = 0; i < raw.records.size(); ++i) {
    if (good[i]) continue;
    size_t from = (i + 1) % raw.records.size();
    while (!good[from]) from = (from + 1) % raw.records.size();
    std::memcpy(data + i * sample, data + from * sample, sample * sizeof(float));
    std::memcpy(label + i * width, label + from * width, width * sizeof(float));
    batch.index[i] = batch.index[from];
  }
  return batch;
}

std::optional<DataBatch> ImageRecordIter::next() {
  while (true) {
    auto result = pipeline_->next();
    if (!result) return std::nullopt;
    if (*result) return std::move(**result);
    // Every record of that batch was skipped; go on with the next.
  }
}

void ImageRecordIter::reset() {
  ++epoch_;
  start_epoch();
}

}  // namespace mx
