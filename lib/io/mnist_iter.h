// MNISTIter: batches from an IDX image file and an IDX label file (MNIST,
// Fashion-MNIST; plain or .gz), with MXNet's parameter names. Pixels are
// scaled to [0, 1) by 1/256 as MXNet does. The whole set is held as bytes
// (47 MB for 60000 images) and converted to float per batch.
#pragma once

#include <optional>
#include <string>

#include "base/param.h"
#include "io/data_iter.h"
#include "io/epoch_order.h"
#include "io/idx_file.h"

namespace mx {

struct MNISTIterParam : Params<MNISTIterParam> {
  std::string image, label;
  int batch_size = 128;
  bool shuffle = true;
  bool flat = false;
  int seed = 0;
  bool silent = false;
  int num_parts = 1, part_index = 0;
  bool round_batch = true;

  static void declare(ParamDecl<MNISTIterParam>& d);
};

class MNISTIter final : public DataIter {
 public:
  explicit MNISTIter(const MNISTIterParam& param);

  std::optional<DataBatch> next() override;
  void reset() override;
  Shape data_shape() const override;
  Shape label_shape() const override;
  std::optional<int64_t> batches_per_epoch() const override {
    return static_cast<int64_t>(
        batch_count(order_.size(), static_cast<uint64_t>(param_.batch_size)));
  }

  // Examples in this worker's shard.
  uint64_t examples() const { return order_.size(); }

 private:
  void start_epoch();

  MNISTIterParam param_;
  IdxArray images_, labels_;
  uint64_t epoch_ = 0;
  std::vector<uint64_t> order_;
  uint64_t batch_ = 0;
};

}  // namespace mx
