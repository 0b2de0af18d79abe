#include "train/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "train/kl_threshold.h"

namespace mx::train {

CalibrationMode parse_calibration_mode(const std::string& text, const std::string& option) {
  if (text == "naive") return CalibrationMode::kNaive;
  if (text == "entropy") return CalibrationMode::kEntropy;
  throw InputError(option + ": '" + text + "' is not a calibration mode (naive or entropy)");
}

std::vector<op::ValueRange> calibrate(Predictor& predictor,
                                      const std::vector<graph::NodeEntry>& values,
                                      CalibrationMode mode, const CalibrationBatches& batches) {
  constexpr float kInf = std::numeric_limits<float>::infinity();
  std::vector<op::ValueRange> ranges(values.size(), op::ValueRange{kInf, -kInf});
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
    }
  });
  if (seen == 0) throw InputError("the calibration data has no examples");
  for (auto& r : ranges)
    if (r.min > r.max) r = {0, 0};
  if (mode == CalibrationMode::kNaive) return ranges;

  constexpr int kBins = 8001;
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
  for (size_t v = 0; v < values.size(); ++v) {
    const bool non_negative = ranges[v].min >= 0;
    const KlThreshold t = kl_threshold(histograms[v], non_negative ? 511 : 255);
    const auto threshold = static_cast<float>(t.threshold);
    ranges[v] = non_negative ? op::ValueRange{0, threshold} : op::ValueRange{-threshold, threshold};
  }
  return ranges;
}

}  // namespace mx::train
