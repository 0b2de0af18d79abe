// ImageRecordIter: batches of images from an MXNet image .rec (im2rec's or
// mx-pack's), with MXNet's parameter names. A producer thread reads records
// (through the .idx when shuffling or when one is given, else sequentially)
// and groups them into batches; `preprocess_threads` workers decode and
// augment whole batches straight into their NDArrays; up to
// `prefetch_buffer` finished batches wait for the consumer.
//
// Bad data — a damaged region, a truncated file, a record that is not an
// image record, an image OpenCV cannot decode — is reported with the file and
// byte offset. bad_record='stop' (default) throws InputError at that batch;
// 'skip' logs a warning, counts it (stats()) and goes on: a skipped image's
// slot takes a copy of another image of the same batch, so batches stay full
// and the order stays reproducible. A record whose label count differs from
// label_width is a configuration error and always stops.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/param.h"
#include "io/data_iter.h"
#include "io/image_augmenter.h"
#include "io/ordered_pipeline.h"
#include "recordio/byte_source.h"
#include "recordio/indexed_reader.h"
#include "recordio/reader.h"

namespace mx {

enum class BadRecordPolicy { kStop, kSkip };

struct ImageRecordIterParam : Params<ImageRecordIterParam> {
  std::string path_imgrec, path_imgidx;
  Shape data_shape;
  int label_width = 1;
  int batch_size = 1;
  bool shuffle = false;
  int seed = 0;
  int part_index = 0, num_parts = 1;
  bool round_batch = true;
  int resize = -1;
  bool rand_crop = false, rand_mirror = false;
  float mean_r = 0, mean_g = 0, mean_b = 0;
  float std_r = 1, std_g = 1, std_b = 1;
  float scale = 1;
  int preprocess_threads = 0;
  int prefetch_buffer = 4;
  BadRecordPolicy bad_record = BadRecordPolicy::kStop;

  static void declare(ParamDecl<ImageRecordIterParam>& d);
};

class ImageRecordIter final : public DataIter {
 public:
  explicit ImageRecordIter(const ImageRecordIterParam& param);
  ~ImageRecordIter() override;

  std::optional<DataBatch> next() override;
  void reset() override;
  Shape data_shape() const override;
  Shape label_shape() const override;
  // Known when reading through an index and no damaged record may be skipped.
  std::optional<int64_t> batches_per_epoch() const override;

  struct Stats {
    uint64_t damaged_regions = 0;  // skipped regions of the .rec (bad framing)
    uint64_t bad_records = 0;      // skipped records: not image records, or not decodable
  };
  Stats stats() const { return {damaged_regions_.load(), bad_records_.load()}; }
  // The worker threads in use.
  int threads() const { return threads_; }

 private:
  struct RawRecord {
    std::string payload;
    uint64_t offset = 0;    // in the .rec
    uint64_t position = 0;  // in the epoch; seeds the image's augmentation
  };
  struct RawBatch {
    std::vector<RawRecord> records;  // batch_size, or fewer in a last batch without round_batch
    int pad = 0;
  };
  using Pipeline = OrderedPipeline<RawBatch, std::optional<DataBatch>>;

  void start_epoch();
  // Producer thread: the epoch's next good record, or nullopt at its end.
  std::optional<RawRecord> next_record();
  std::optional<RawBatch> next_raw_batch();
  // Worker thread: nullopt when every record of the batch was skipped.
  std::optional<DataBatch> decode(RawBatch&& raw, int worker);
  // Throws InputError (stop) or logs and counts (skip).
  void bad_record(const std::string& message);

  ImageRecordIterParam param_;
  int threads_ = 1;
  std::shared_ptr<const recordio::ByteSource> source_;
  std::optional<recordio::IndexedReader> indexed_;
  std::vector<std::unique_ptr<ImageAugmenter>> augmenters_;
  std::atomic<uint64_t> damaged_regions_{0}, bad_records_{0};

  // State of the current epoch, used by the producer thread only.
  uint64_t epoch_ = 0;
  std::vector<uint64_t> order_;  // index entries, when reading through the index
  size_t cursor_ = 0;
  std::unique_ptr<recordio::Reader> reader_;  // sequential reading otherwise
  uint64_t produced_ = 0;                     // records handed out this epoch
  std::vector<RawRecord> first_records_;      // to complete the last batch
  bool epoch_done_ = false;

  std::unique_ptr<Pipeline> pipeline_;
};

}  // namespace mx
