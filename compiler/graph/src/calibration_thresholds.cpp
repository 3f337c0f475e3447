// Calibration's clipping thresholds (entropy, MSE) over a histogram of the magnitudes seen.
#include "calibration_thresholds.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

namespace tessera::compiler::graph::detail {

namespace {

// Counts of the magnitudes in `bins` bins of `width` from 0, the last one taking everything above.
// Exact zeros are left out: they quantize exactly at any threshold, and their spike (a ReLU's
// negative half, an image's background) would make every coarse level look costly to the entropy
// method.
std::vector<double> histogram(const std::vector<float>& magnitudes, double width, int bins) {
  std::vector<double> hist(size_t(bins), 0.0);
  for (float v : magnitudes)
    if (v > 0) hist[size_t(std::min<int64_t>(int64_t(double(v) / width), bins - 1))] += 1;
  return hist;
}

}  // namespace

float entropyThreshold(const std::vector<float>& magnitudes, float maxAbs) {
  constexpr int kBins = 2048, kLevels = 128, kStride = 16;
  if (magnitudes.empty() || !(maxAbs > 0)) return maxAbs;
  const double width = double(maxAbs) / kBins;
  const std::vector<double> hist = histogram(magnitudes, width, kBins);
  double best = std::numeric_limits<double>::infinity();
  int bestBins = kBins;
  std::vector<double> p, q;
  for (int bins = kLevels; bins <= kBins; bins += kStride) {
    p.assign(hist.begin(), hist.begin() + bins);
    for (int b = bins; b < kBins; ++b) p[size_t(bins - 1)] += hist[size_t(b)];  // clipped into the last bin
    // Q: the unclipped bins quantized to 128 levels, each level's mass spread evenly over the bins
    // it covers that have values. The outliers P clipped into its last bin are not in Q, so that
    // clipping many of them costs divergence.
    q.assign(size_t(bins), 0.0);
    for (int level = 0; level < kLevels; ++level) {
      const int first = level * bins / kLevels, last = (level + 1) * bins / kLevels;
      double mass = 0;
      int used = 0;
      for (int b = first; b < last; ++b) {
        mass += hist[size_t(b)];
        used += hist[size_t(b)] > 0;
      }
      for (int b = first; b < last; ++b)
        if (hist[size_t(b)] > 0) q[size_t(b)] = mass / used;
    }
    double pSum = 0, qSum = 0;
    for (int b = 0; b < bins; ++b) {
      pSum += p[size_t(b)];
      qSum += q[size_t(b)];
    }
    // A bin Q has nothing in (the clipped outliers' when the last bin held none) counts as a tiny
    // probability: a large, finite divergence.
    double kl = 0;
    for (int b = 0; b < bins; ++b)
      if (p[size_t(b)] > 0)
        kl += p[size_t(b)] / pSum * std::log((p[size_t(b)] / pSum) / std::max(q[size_t(b)] / qSum, 1e-12));
    if (kl < best) {
      best = kl;
      bestBins = bins;
    }
  }
  return float(double(bestBins) * width);
}

float mseThreshold(const std::vector<float>& magnitudes, float maxAbs) {
  constexpr int kBins = 2048, kFirst = 64, kStride = 4;
  constexpr double kSteps = 127;
  if (magnitudes.empty() || !(maxAbs > 0)) return maxAbs;
  const double width = double(maxAbs) / kBins;
  const std::vector<double> hist = histogram(magnitudes, width, kBins);
  double best = std::numeric_limits<double>::infinity();
  int bestBins = kBins;
  for (int bins = kFirst; bins <= kBins; bins += kStride) {
    const double threshold = double(bins) * width, step = threshold / kSteps;
    double inside = 0, clipped = 0;
    for (int b = 0; b < bins; ++b) inside += hist[size_t(b)];
    for (int b = bins; b < kBins; ++b) {
      const double over = (double(b) + 0.5) * width - threshold;
      clipped += hist[size_t(b)] * over * over;
    }
    const double err = inside * step * step / 12 + clipped;
    if (err < best) {
      best = err;
      bestBins = bins;
    }
  }
  return float(double(bestBins) * width);
}

}  // namespace tessera::compiler::graph::detail
