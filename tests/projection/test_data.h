// Data for the projection tests: seeded Gaussian clusters (labels known, so separation can
// be checked) and matrices with an exactly known sample covariance.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "core/projection/random.h"

namespace attnlab::projection::testing {

struct Clusters {
  int64_t n = 0;
  int64_t d = 0;
  std::vector<float> x;     // N×D
  std::vector<int> label;   // N
};

// `clusters` spherical Gaussians of standard deviation 1 and `per` points each, centred at
// `separation` × (a one-hot direction), so every pair of centres is separation·√2 apart.
inline Clusters gaussian_clusters(int clusters, int per, int64_t d, double separation, uint64_t seed) {
  Clusters c;
  c.n = static_cast<int64_t>(clusters) * per;
  c.d = d;
  SplitMix64 rng(seed);
  for (int k = 0; k < clusters; ++k)
    for (int p = 0; p < per; ++p) {
      for (int64_t j = 0; j < d; ++j)
        c.x.push_back(static_cast<float>((j == k % d ? separation : 0.0) + rng.normal()));
      c.label.push_back(k);
    }
  return c;
}

// The fraction of points whose k nearest neighbours in y (N×dims) all share its label.
inline double label_purity(const std::vector<double>& y, int dims, const std::vector<int>& label, int k) {
  const auto n = static_cast<int64_t>(label.size());
  int64_t pure = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::vector<std::pair<double, int64_t>> d;
    for (int64_t j = 0; j < n; ++j) {
      if (j == i) continue;
      double s = 0;
      for (int c = 0; c < dims; ++c) s += std::pow(y[static_cast<size_t>(i * dims + c)] - y[static_cast<size_t>(j * dims + c)], 2);
      d.emplace_back(s, j);
    }
    std::partial_sort(d.begin(), d.begin() + k, d.end());
    bool ok = true;
    for (int m = 0; m < k; ++m) ok = ok && label[static_cast<size_t>(d[static_cast<size_t>(m)].second)] == label[static_cast<size_t>(i)];
    pure += ok;
  }
  return static_cast<double>(pure) / static_cast<double>(n);
}

}  // namespace attnlab::projection::testing
