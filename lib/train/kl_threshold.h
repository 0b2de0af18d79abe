// The entropy calibration of post-training quantization (TensorRT's method,
// as MXNet 1.x's calibrate_entropy computes it): of the thresholds that
// clip a value's histogram symmetrically around zero, the one whose
// quantized distribution is closest to the original in KL divergence.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mx::train {

// A histogram of a value's elements over [-limit, limit] in an odd number
// of equal bins (MXNet uses 8001).
struct Histogram {
  std::vector<int64_t> counts;
  double limit = 0;
  double min = 0, max = 0;  // of the elements seen

  Histogram(int bins, double limit);
  void add(const float* values, int64_t n);
  double edge(size_t i) const;  // the lower edge of bin i; edge(bins) is limit
};

struct KlThreshold {
  double threshold = 0;   // the values are clipped to [-threshold, threshold]
  double divergence = 0;  // at that threshold
};

// `quantized_bins`: 255 for int8; MXNet takes 511 for a value without
// negative elements (it is then quantized to uint8 over [0, threshold]).
KlThreshold kl_threshold(const Histogram& histogram, int quantized_bins);

}  // namespace mx::train
