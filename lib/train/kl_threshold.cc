#include "train/kl_threshold.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "base/error.h"

namespace mx::train {
namespace {

// Replaces the zeros of a distribution by eps, taking the same mass off
// its other entries; empty when the distribution cannot be smoothed.
std::vector<float> smoothed(std::vector<float> p, float eps = 1e-4f) {
  const auto zeros = static_cast<size_t>(std::count(p.begin(), p.end(), 0.0f));
  const size_t nonzeros = p.size() - zeros;
  if (nonzeros == 0) return {};
  const float eps1 = eps * static_cast<float>(zeros) / static_cast<float>(nonzeros);
  if (eps1 >= 1.0f) return {};
  for (float& v : p) v += v == 0.0f ? eps : -eps1;
  return p;
}

// KL(p || q) of two smoothed (positive) distributions, each normalised first.
float divergence(const std::vector<float>& p, const std::vector<float>& q) {
  const float p_sum = std::accumulate(p.begin(), p.end(), 0.0f);
  const float q_sum = std::accumulate(q.begin(), q.end(), 0.0f);
  float sum = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    const float pi = p[i] / p_sum, qi = q[i] / q_sum;
    sum += pi * std::log(pi / qi);
  }
  return sum;
}

// The divergence of clipping to the central 2 * half + 1 bins.
float clipped_divergence(const std::vector<int64_t>& hist, size_t half, size_t quantized_bins) {
  const size_t zero_bin = hist.size() / 2;
  const size_t start = zero_bin - half, stop = zero_bin + half + 1;
  // p: the clipped histogram, the mass outside folded into its end bins
  // (MXNet's kernel folds bin `start` itself into the first one as well).
  const size_t width = stop - start;
  std::vector<int64_t> sliced(width, 0);
  std::vector<float> p(width, 0.0f);
  for (size_t j = 0; j < hist.size(); ++j) {
    if (j <= start)
      p.front() += static_cast<float>(hist[j]);
    else if (j >= stop)
      p.back() += static_cast<float>(hist[j]);
    else
      sliced[j - start] = hist[j], p[j - start] = static_cast<float>(hist[j]);
  }
  // q: the sliced histogram merged into quantized_bins bins, each spread
  // evenly over its nonzero source bins.
  const size_t merged = width / quantized_bins;
  std::vector<float> q(width, 0.0f);
  for (size_t j = 0; j < quantized_bins; ++j) {
    const size_t begin = j * merged;
    const size_t end = j == quantized_bins - 1 ? width : begin + merged;
    int64_t mass = 0;
    int nonzero = 0;
    for (size_t k = begin; k < end; ++k) {
      mass += sliced[k];
      nonzero += sliced[k] != 0;
    }
    if (nonzero == 0) continue;
    for (size_t k = begin; k < end; ++k)
      if (p[k] != 0.0f) q[k] = static_cast<float>(mass) / static_cast<float>(nonzero);
  }
  p = smoothed(std::move(p));
  q = smoothed(std::move(q));
  if (p.empty() || q.empty()) return std::numeric_limits<float>::infinity();
  return divergence(p, q);
}

}  // namespace

Histogram::Histogram(int bins, double limit_)
    : counts(static_cast<size_t>(bins), 0), limit(limit_) {
  MX_CHECK(bins > 0 && bins % 2 == 1, "a calibration histogram needs an odd number of bins");
  min = std::numeric_limits<double>::infinity();
  max = -min;
}

void Histogram::add(const float* values, int64_t n) {
  const auto bins = static_cast<int64_t>(counts.size());
  const double width = 2 * limit / static_cast<double>(bins);
  for (int64_t i = 0; i < n; ++i) {
    const double v = values[i];
    min = std::min(min, v);
    max = std::max(max, v);
    if (limit <= 0) {
      ++counts[counts.size() / 2];
      continue;
    }
    // numpy.histogram's rule: bins are half open, the last one closed; values outside are dropped.
    if (v < -limit || v > limit) continue;
    auto bin = static_cast<int64_t>((v + limit) / width);
    counts[static_cast<size_t>(std::clamp<int64_t>(bin, 0, bins - 1))]++;
  }
}

double Histogram::edge(size_t i) const {
  return -limit + 2 * limit * static_cast<double>(i) / static_cast<double>(counts.size());
}

KlThreshold kl_threshold(const Histogram& histogram, int quantized_bins) {
  const size_t bins = histogram.counts.size();
  const auto levels = static_cast<size_t>(quantized_bins);
  MX_CHECK(levels % 2 == 1 && levels <= bins, "KL calibration: ", quantized_bins,
           " quantized bins for a histogram of ", bins);
  // As MXNet: the first candidate unless one has a finite divergence.
  KlThreshold best{histogram.edge(bins / 2 + levels / 2 + 1), std::numeric_limits<float>::max()};
  for (size_t half = levels / 2; half <= bins / 2; ++half) {
    const float d = clipped_divergence(histogram.counts, half, levels);
    if (d < best.divergence) best = {histogram.edge(bins / 2 + half + 1), d};
  }
  return best;
}

}  // namespace mx::train
