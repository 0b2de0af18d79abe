// Post-training quantization's calibration (train/kl_threshold.h,
// train/calibration.h): the entropy thresholds against MXNet 1.9.1's own
// kernel on the same histograms, the histogram's binning, and the
// calibration modes' names.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>

#include "base/error.h"
#include "train/calibration.h"
#include "train/kl_threshold.h"

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

TEST_CASE("calibration modes are named naive and entropy") {
  CHECK(parse_calibration_mode("naive", "--mode") == CalibrationMode::kNaive);
  CHECK(parse_calibration_mode("entropy", "--mode") == CalibrationMode::kEntropy);
  CHECK_THROWS_WITH_AS(parse_calibration_mode("kl", "--mode"),
                       "--mode: 'kl' is not a calibration mode (naive or entropy)", InputError);
}
