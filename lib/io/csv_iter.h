// CSVIter: batches from CSV files of numbers, with MXNet's parameter names:
// data_csv rows reshaped to data_shape, labels from label_csv (label_shape)
// or, as an mx extension, from a column of data_csv (label_column).
#pragma once

#include <optional>
#include <string>

#include "base/param.h"
#include "io/csv_table.h"
#include "io/data_iter.h"
#include "io/epoch_order.h"

namespace mx {

struct CSVIterParam : Params<CSVIterParam> {
  std::string data_csv;
  Shape data_shape;
  std::string label_csv = "NULL";
  Shape label_shape;
  int label_column = -1;
  int batch_size = 1;
  bool round_batch = true;
  bool shuffle = false;
  int seed = 0;
  int num_parts = 1, part_index = 0;

  static void declare(ParamDecl<CSVIterParam>& d);
};

class CSVIter final : public DataIter {
 public:
  explicit CSVIter(const CSVIterParam& param);

  std::optional<DataBatch> next() override;
  void reset() override;
  Shape data_shape() const override;
  Shape label_shape() const override;
  std::optional<int64_t> batches_per_epoch() const override {
    return static_cast<int64_t>(
        batch_count(order_.size(), static_cast<uint64_t>(param_.batch_size)));
  }

 private:
  void start_epoch();

  CSVIterParam param_;
  std::vector<float> data_, label_;  // row-major, per example
  int64_t examples_ = 0, data_width_ = 0, label_width_ = 0;
  uint64_t epoch_ = 0, batch_ = 0;
  std::vector<uint64_t> order_;
};

}  // namespace mx
