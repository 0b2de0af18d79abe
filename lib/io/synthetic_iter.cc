#include "io/synthetic_iter.h"

#include "io/random.h"

namespace mx {

void SyntheticIterParam::declare(ParamDecl<SyntheticIterParam>& d) {
  using P = SyntheticIterParam;
  d.field("data_shape", &P::data_shape).describe("shape of one example, e.g. (3, 224, 224)");
  d.field("batch_size", &P::batch_size).set_lower_bound(1).describe("examples per batch");
  d.field("num_batches", &P::num_batches)
      .set_default(100)
      .set_lower_bound(1)
      .describe("batches per epoch");
  d.field("num_classes", &P::num_classes)
      .set_default(10)
      .set_lower_bound(1)
      .describe("labels are integers in [0, num_classes)");
  d.field("label_width", &P::label_width)
      .set_default(1)
      .set_lower_bound(1)
      .describe("labels per example");
  d.field("seed", &P::seed).set_default(0).describe("seed of the generated values");
}

SyntheticIter::SyntheticIter(const SyntheticIterParam& param) : param_(param) {
  if (!param_.data_shape.is_known() || param_.data_shape.ndim() < 1)
    throw InputError("SyntheticIter: data_shape must be a known shape such as (3, 224, 224)");
  std::vector<int64_t> dims{param_.batch_size};
  for (int64_t d : param_.data_shape) dims.push_back(d);
  const Shape data_shape(dims);
  const Shape label_shape = param_.label_width == 1 ? Shape{param_.batch_size}
                                                    : Shape{param_.batch_size, param_.label_width};
  Rng rng(static_cast<uint64_t>(param_.seed));
  std::vector<float> data(static_cast<size_t>(data_shape.size()));
  for (auto& v : data) v = static_cast<float>(rng.uniform01());
  std::vector<float> label(static_cast<size_t>(label_shape.size()));
  for (auto& v : label)
    v = static_cast<float>(rng.uniform(static_cast<uint64_t>(param_.num_classes)));
  batch_.data = NDArray::from_vector(data_shape, std::move(data));
  batch_.label = NDArray::from_vector(label_shape, std::move(label));
  for (int i = 0; i < param_.batch_size; ++i) batch_.index.push_back(static_cast<uint64_t>(i));
}

std::optional<DataBatch> SyntheticIter::next() {
  if (served_ >= param_.num_batches) return std::nullopt;
  ++served_;
  return batch_;
}

}  // namespace mx
