// SyntheticIter: batches of a given shape without any input, for benchmarks
// and for trying a network: data uniform in [0, 1), integer labels in
// [0, num_classes), generated once from the seed and handed out num_batches
// times per epoch (so the iterator itself costs nothing).
#pragma once

#include <optional>

#include "base/param.h"
#include "io/data_iter.h"

namespace mx {

struct SyntheticIterParam : Params<SyntheticIterParam> {
  Shape data_shape;
  int batch_size = 1;
  int num_batches = 100;
  int num_classes = 10;
  int label_width = 1;
  int seed = 0;

  static void declare(ParamDecl<SyntheticIterParam>& d);
};

class SyntheticIter final : public DataIter {
 public:
  explicit SyntheticIter(const SyntheticIterParam& param);

  std::optional<DataBatch> next() override;
  void reset() override { served_ = 0; }
  Shape data_shape() const override { return batch_.data.shape(); }
  Shape label_shape() const override { return batch_.label.shape(); }
  std::optional<int64_t> batches_per_epoch() const override { return param_.num_batches; }

 private:
  SyntheticIterParam param_;
  DataBatch batch_;
  int served_ = 0;
};

}  // namespace mx
