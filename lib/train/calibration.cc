#include "train/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "train/kl_threshold.h"
#include "train/mse_threshold.h"

namespace mx::train {

CalibrationMode parse_calibration_mode(const std::string& text, const std::string& option) {
  if (text == "naive") return CalibrationMode::kNaive;
  if (text == "entropy") return CalibrationMode::kEntropy;
  if (text == "mse") return CalibrationMode::kMse;
  throw InputError(option + ": '" + text + "' is not a calibration mode (naive, entropy or mse)");
}

const char* calibration_mode_name(CalibrationMode mode) {
  switch (mode) {
    case CalibrationMode::kNaive: return "naive";
    case CalibrationMode::kEntropy: return "entropy";
    case CalibrationMode::kMse: return "mse";
  }
  return "naive";
}

std::vector<op::ValueRange> calibrate(Predictor& predictor,
                                      const std::vector<graph::NodeEntry>& values,
                                      CalibrationMode mode, const CalibrationBatches& batches) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  constexpr int kBins = 8001;
  std::vector<op::ValueRange> ranges(values.size(), op::ValueRange{kInf, -kInf});
  // mse: each batch's own threshold, averaged over the batches, so that
  // one batch with an outlying image moves the range by its share only.
  std::vector<double> mse_sums(values.size(), 0.0);
  std::vector<int> mse_counts(values.size(), 0);
  int seen = 0;
  batches([&](const NDArray& batch) {
    ++seen;
    const auto outputs = predictor.internal_values(batch, values);
    for (size_t v = 0; v < values.size(); ++v) {
      const auto x = outputs[v].to_vector<float>();
      if (x.empty()) continue;
      const auto [low, high] = std::minmax_element(x.begin(), x.end());
      ranges[v].min = std::min(ranges[v].min, *low);
      ranges[v].max = std::max(ranges[v].max, *high);
      if (mode != CalibrationMode::kMse) continue;
      Histogram histogram(kBins, std::max(std::fabs(*low), std::fabs(*high)));
      histogram.add(x.data(), static_cast<int64_t>(x.size()));
      mse_sums[v] += mse_threshold(histogram, *low >= 0 ? 255 : 127).threshold;
      ++mse_counts[v];
    }
  });
  if (seen == 0) throw InputError("the calibration data has no examples");
  for (auto& r : ranges)
    if (r.min > r.max) r = {0, 0};
  if (mode == CalibrationMode::kNaive) return ranges;

  // A value without negative elements is held as uint8 over [0, threshold].
  const auto clipped = [](const op::ValueRange& seen_range, double threshold) {
    const auto t = static_cast<float>(threshold);
    return seen_range.min >= 0 ? op::ValueRange{0, t} : op::ValueRange{-t, t};
  };
  if (mode == CalibrationMode::kMse) {
    for (size_t v = 0; v < values.size(); ++v)
      if (mse_counts[v] > 0) ranges[v] = clipped(ranges[v], mse_sums[v] / mse_counts[v]);
    return ranges;
  }

  std::vector<Histogram> histograms;
  for (const auto& r : ranges)
    histograms.emplace_back(kBins, std::max(std::fabs(r.min), std::fabs(r.max)));
  batches([&](const NDArray& batch) {
    const auto outputs = predictor.internal_values(batch, values);
    for (size_t v = 0; v < values.size(); ++v) {
      const auto x = outputs[v].to_vector<float>();
      histograms[v].add(x.data(), static_cast<int64_t>(x.size()));
    }
  });
  for (size_t v = 0; v < values.size(); ++v)
    ranges[v] =
        clipped(ranges[v], kl_threshold(histograms[v], ranges[v].min >= 0 ? 511 : 255).threshold);
  return ranges;
}

}  // namespace mx::train
