#include "io/csv_iter.h"

#include <cstring>

#include "io/epoch_order.h"
#include "io/memory_batch.h"

namespace mx {

void CSVIterParam::declare(ParamDecl<CSVIterParam>& d) {
  using P = CSVIterParam;
  d.field("data_csv", &P::data_csv).describe("CSV file of examples, one per line");
  d.field("data_shape", &P::data_shape)
      .describe("shape of one example, e.g. (784,) or (1, 28, 28)");
  d.field("label_csv", &P::label_csv)
      .set_default("NULL")
      .describe("CSV file of labels, one line per example; NULL for none (labels 0)");
  d.field("label_shape", &P::label_shape)
      .set_default(Shape{1})
      .describe("shape of one example's label");
  d.field("label_column", &P::label_column)
      .set_default(-1)
      .set_lower_bound(-1)
      .describe("take the label from this column of data_csv (mx extension); -1: none");
  d.field("batch_size", &P::batch_size).set_lower_bound(1).describe("examples per batch");
  d.field("round_batch", &P::round_batch)
      .set_default(true)
      .describe("complete the last batch from the start of the epoch (else pad it with zeros)");
  d.field("shuffle", &P::shuffle).set_default(false).describe("a new random order every epoch");
  d.field("seed", &P::seed).set_default(0).describe("seed of the shuffle");
  declare_shard_fields(d);
}

CSVIter::CSVIter(const CSVIterParam& param) : param_(param) {
  const std::string owner = "CSVIter '" + param_.data_csv + "'";
  if (!param_.data_shape.is_known() || param_.data_shape.ndim() < 1 || param_.data_shape.size() < 1)
    throw InputError(owner + ": data_shape must be a known, non-empty shape such as (784,); got " +
                     param_.data_shape.to_string());
  if (param_.label_shape.is_known() && param_.label_shape.size() < 1)
    throw InputError(owner + ": label_shape " + param_.label_shape.to_string() +
                     " holds no values; leave it out for one label per example");
  if (param_.part_index >= param_.num_parts)
    throw InputError(str(owner, ": part_index ", param_.part_index, " must be below num_parts ",
                         param_.num_parts));
  const bool label_file = param_.label_csv != "NULL" && !param_.label_csv.empty();
  if (label_file && param_.label_column >= 0)
    throw InputError(owner + ": give label_csv or label_column, not both");
  CsvTable table = read_csv(param_.data_csv);
  examples_ = table.rows;
  data_width_ = param_.data_shape.size();
  label_width_ = param_.label_shape.is_known() ? param_.label_shape.size() : 1;
  const int64_t expected = data_width_ + (param_.label_column >= 0 ? 1 : 0);
  if (table.rows > 0 && table.cols != expected)
    throw InputError(str(param_.data_csv, ":", table.first_line, ": ", table.cols,
                         " columns, but data_shape ", param_.data_shape.to_string(), " needs ",
                         data_width_, param_.label_column >= 0 ? " plus the label column" : ""));
  if (param_.label_column >= 0 && param_.label_column >= table.cols)
    throw InputError(str(owner, ": label_column ", param_.label_column, " but rows have ",
                         table.cols, " columns"));
  if (param_.label_column >= 0 && label_width_ != 1)
    throw InputError(owner +
                     ": label_column gives one label per example; label_shape must be (1,)");
  if (param_.label_column < 0) {
    data_ = std::move(table.values);
  } else {
    data_.reserve(static_cast<size_t>(examples_ * data_width_));
    label_.reserve(static_cast<size_t>(examples_));
    for (int64_t r = 0; r < examples_; ++r)
      for (int64_t c = 0; c < table.cols; ++c)
        (c == param_.label_column ? label_ : data_).push_back(table.row(r)[c]);
  }
  if (label_file) {
    CsvTable labels = read_csv(param_.label_csv);
    if (labels.rows != examples_)
      throw InputError(str(param_.label_csv, " has ", labels.rows, " rows but ", param_.data_csv,
                           " has ", examples_));
    if (labels.rows > 0 && labels.cols != label_width_)
      throw InputError(str(param_.label_csv, ":", labels.first_line, ": ", labels.cols,
                           " columns, but label_shape ", param_.label_shape.to_string(), " needs ",
                           label_width_));
    label_ = std::move(labels.values);
  } else if (param_.label_column < 0) {
    label_.assign(static_cast<size_t>(examples_ * label_width_), 0.0f);
  }
  start_epoch();
}

Shape CSVIter::data_shape() const {
  std::vector<int64_t> dims{param_.batch_size};
  for (int64_t d : param_.data_shape) dims.push_back(d);
  return Shape(dims);
}

Shape CSVIter::label_shape() const {
  if (label_width_ == 1) return Shape{param_.batch_size};
  std::vector<int64_t> dims{param_.batch_size};
  for (int64_t d : param_.label_shape) dims.push_back(d);
  return Shape(dims);
}

void CSVIter::start_epoch() {
  order_ = epoch_order(static_cast<uint64_t>(examples_), param_.part_index, param_.num_parts,
                       param_.shuffle, static_cast<uint64_t>(param_.seed), epoch_);
  batch_ = 0;
}

std::optional<DataBatch> CSVIter::next() {
  const size_t dw = static_cast<size_t>(data_width_), lw = static_cast<size_t>(label_width_);
  const MemoryBatchLayout layout{static_cast<uint64_t>(param_.batch_size),
                                 param_.round_batch,
                                 dw,
                                 lw,
                                 data_shape(),
                                 label_shape()};
  return next_memory_batch(order_, batch_, layout,
                           [&](uint64_t example, float* data, float* label) {
                             std::memcpy(data, &data_[example * dw], dw * sizeof(float));
                             std::memcpy(label, &label_[example * lw], lw * sizeof(float));
                           });
}

void CSVIter::reset() {
  ++epoch_;
  start_epoch();
}

}  // namespace mx
