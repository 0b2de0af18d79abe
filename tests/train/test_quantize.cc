// Post-training quantization's calibration (train/kl_threshold.h,
// train/mse_threshold.h, train/calibration.h): the entropy thresholds
// against MXNet 1.9.1's own kernel on the same histograms, the mse
// thresholds against quantizing the samples themselves, the histogram's
// binning, and the calibration modes' names.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "base/error.h"
#include "train/calibration.h"
#include "train/kl_threshold.h"
#include "train/mse_threshold.h"

using namespace mx;
using namespace mx::train;

TEST_CASE("entropy thresholds are MXNet 1.9.1's on the same histograms") {
  std::ifstream in(std::string(MX_FIXTURES_DIR) + "/quantize/kl_thresholds.txt");
  REQUIRE(in);
  std::string line;
  std::getline(in, line);  // header
  int cases = 0;
  while (std::getline(in, line)) {
    std::istringstream head(line);
    std::string name;
    int levels = 0;
    double limit = 0, threshold = 0, divergence = 0;
    head >> name >> levels >> limit >> threshold >> divergence;
    std::string counts_line;
    REQUIRE(std::getline(in, counts_line));
    std::istringstream counts(counts_line);
    std::vector<int64_t> bins;
    for (int64_t c; counts >> c;) bins.push_back(c);
    Histogram h(static_cast<int>(bins.size()), limit);
    h.counts = bins;
    const KlThreshold got = kl_threshold(h, levels);
    INFO(name);
    // MXNet's edges are float32: the same bin's edge within float rounding.
    CHECK(got.threshold == doctest::Approx(threshold).epsilon(1e-6));
    CHECK(got.divergence == doctest::Approx(divergence).epsilon(1e-4));
    ++cases;
  }
  CHECK(cases == 4);
}

TEST_CASE("a calibration histogram bins as numpy.histogram does and records the extremes") {
  Histogram h(5, 1.0);  // edges -1, -0.6, -0.2, 0.2, 0.6, 1
  const float values[] = {-1.0f, -0.7f, -0.5f, 0.0f, 0.19f, 0.7f, 1.0f, 1.5f};
  h.add(values, 8);
  CHECK(h.counts == std::vector<int64_t>{2, 1, 2, 0, 2});  // 1.5 is outside
  CHECK(h.min == doctest::Approx(-1.0));
  CHECK(h.max == doctest::Approx(1.5));
  CHECK(h.edge(5) == doctest::Approx(1.0));
}

TEST_CASE("a histogram of one spike keeps the first threshold, as MXNet does") {
  Histogram h(1001, 2.0);
  h.counts[500] = 1000;  // every value zero
  const KlThreshold t = kl_threshold(h, 255);
  CHECK(std::isfinite(t.threshold));
  CHECK(t.threshold > 0);
}

namespace {

// The mean squared error of really quantizing `x` to `steps` steps on
// each side of zero over [-threshold, threshold] (or [0, threshold]).
double quantized_mse(const std::vector<float>& x, double threshold, int steps) {
  const double step = threshold / steps;
  double sum = 0;
  for (float v : x) {
    const double q = std::clamp(std::nearbyint(v / step), -double(steps), double(steps)) * step;
    sum += (v - q) * (v - q);
  }
  return sum / static_cast<double>(x.size());
}

// Gaussian samples from a fixed seed (Box-Muller on mt19937, whose output
// the standard fixes), optionally folded through a ReLU.
std::vector<float> gaussian(size_t n, bool relu) {
  std::mt19937 bits(7);
  std::vector<float> x(n);
  for (size_t i = 0; i < n; ++i) {
    const double u1 = (bits() + 1.0) / 4294967297.0, u2 = bits() / 4294967296.0;
    const double g = std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    x[i] = static_cast<float>(relu ? std::max(g, 0.0) : g);
  }
  return x;
}

Histogram histogram_of(const std::vector<float>& x) {
  float limit = 0;
  for (float v : x) limit = std::max(limit, std::fabs(v));
  Histogram h(8001, limit);
  h.add(x.data(), static_cast<int64_t>(x.size()));
  return h;
}

}  // namespace

TEST_CASE("the mse threshold is within 2% of the best clipping found by quantizing the samples") {
  for (const bool relu : {false, true}) {
    const int steps = relu ? 255 : 127;  // uint8 over [0, t]; int8 over [-t, t]
    const auto x = gaussian(200000, relu);
    const MseThreshold got = mse_threshold(histogram_of(x), steps);
    double best = std::numeric_limits<double>::infinity();
    for (double t = 2.0; t <= 6.0; t += 0.01) best = std::min(best, quantized_mse(x, t, steps));
    INFO("relu " << relu << ": threshold " << got.threshold);
    CHECK(quantized_mse(x, got.threshold, steps) <= best * 1.02);
    // The model's own estimate agrees with the samples' error.
    CHECK(got.error == doctest::Approx(quantized_mse(x, got.threshold, steps)).epsilon(0.1));
    // A Gaussian's tail is clipped (its largest sample is near 4.9).
    CHECK(got.threshold < 0.9 * histogram_of(x).limit);
  }
}

TEST_CASE("the mse threshold keeps a uniform value's whole range and survives an empty histogram") {
  std::vector<float> x(100000);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) / (x.size() - 1);
  CHECK(mse_threshold(histogram_of(x), 255).threshold >= 0.99);
  Histogram empty(8001, 0.0);
  const MseThreshold t = mse_threshold(empty, 255);
  CHECK(std::isfinite(t.threshold));
}

TEST_CASE("calibration modes are named naive, entropy and mse") {
  CHECK(parse_calibration_mode("naive", "--mode") == CalibrationMode::kNaive);
  CHECK(parse_calibration_mode("entropy", "--mode") == CalibrationMode::kEntropy);
  CHECK(parse_calibration_mode("mse", "--mode") == CalibrationMode::kMse);
  CHECK(std::string(calibration_mode_name(CalibrationMode::kMse)) == "mse");
  CHECK_THROWS_WITH_AS(parse_calibration_mode("kl", "--mode"),
                       "--mode: 'kl' is not a calibration mode (naive, entropy or mse)",
                       InputError);
}
