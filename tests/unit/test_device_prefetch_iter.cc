// DevicePrefetchIter with a pinned host target (the GPU target is the same
// code with one more copy): every batch arrives unchanged, in order, in
// cpu_pinned memory, one batch read ahead, and reset starts over.
#include <doctest/doctest.h>

#include <memory>
#include <optional>
#include <vector>

#include "io/device_prefetch_iter.h"

using namespace mx;

namespace {

// Batch b of an epoch holds b * 10 + row in every data value, b in the label.
class CountingIter : public DataIter {
 public:
  CountingIter(int batches, int* reads) : batches_(batches), reads_(reads) {}
  std::optional<DataBatch> next() override {
    if (at_ >= batches_) return std::nullopt;
    ++*reads_;
    DataBatch b;
    std::vector<float> data;
    for (int row = 0; row < 2; ++row)
      for (int k = 0; k < 3; ++k) data.push_back(static_cast<float>(at_ * 10 + row));
    b.data = NDArray::from_vector<float>({2, 3}, data);
    b.label = NDArray::from_vector<float>({2}, {static_cast<float>(at_), static_cast<float>(at_)});
    b.pad = at_ == batches_ - 1 ? 1 : 0;
    b.index = {static_cast<uint64_t>(2 * at_), static_cast<uint64_t>(2 * at_ + 1)};
    ++at_;
    return b;
  }
  void reset() override { at_ = 0; }
  Shape data_shape() const override { return {2, 3}; }
  Shape label_shape() const override { return {2}; }
  std::optional<int64_t> batches_per_epoch() const override { return batches_; }

 private:
  int batches_, at_ = 0;
  int* reads_;
};

}  // namespace

TEST_CASE("device prefetch: batches arrive unchanged in pinned memory, one read ahead") {
  int reads = 0;
  DevicePrefetchIter iter(std::make_unique<CountingIter>(3, &reads),
                          Context{DeviceType::kCPUPinned, 0});
  CHECK(iter.data_shape() == Shape{2, 3});
  CHECK(iter.batches_per_epoch() == 3);
  for (int epoch = 0; epoch < 2; ++epoch) {
    CAPTURE(epoch);
    for (int b = 0; b < 3; ++b) {
      CAPTURE(b);
      auto batch = iter.next();
      REQUIRE(batch);
      CHECK(reads == epoch * 3 + std::min(b + 2, 3));  // the next batch is already read
      CHECK(batch->data.ctx().type == DeviceType::kCPUPinned);
      CHECK(batch->label.ctx().type == DeviceType::kCPUPinned);
      CHECK(batch->data.to_vector<float>() == std::vector<float>{b * 10.0f, b * 10.0f, b * 10.0f,
                                                                 b * 10.0f + 1, b * 10.0f + 1,
                                                                 b * 10.0f + 1});
      CHECK(batch->label.to_vector<float>() == std::vector<float>{float(b), float(b)});
      CHECK(batch->pad == (b == 2 ? 1 : 0));
      CHECK(batch->index == std::vector<uint64_t>{uint64_t(2 * b), uint64_t(2 * b + 1)});
    }
    CHECK_FALSE(iter.next());
    iter.reset();
  }
}

TEST_CASE("device prefetch: a batch's values hold for work pushed before the next call") {
  int reads = 0;
  DevicePrefetchIter iter(std::make_unique<CountingIter>(4, &reads),
                          Context{DeviceType::kCPUPinned, 0});
  auto first = iter.next();
  REQUIRE(first);
  NDArray kept(first->data.shape(), Context::cpu(), first->data.dtype());
  first->data.copy_to(kept);  // pushed before the buffer is refilled
  iter.next();
  iter.next();  // batch 2 goes into batch 0's buffers
  CHECK(kept.to_vector<float>()[0] == 0.0f);
}

TEST_CASE("device prefetch: the target must be a GPU or pinned memory") {
  int reads = 0;
  CHECK_THROWS_WITH(DevicePrefetchIter(std::make_unique<CountingIter>(1, &reads), Context::cpu()),
                    doctest::Contains("must be a GPU or cpu_pinned"));
  CHECK(pinned_context_for(Context::gpu(3)) == Context{DeviceType::kCPUPinned, 3});
}
