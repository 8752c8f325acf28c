// tsne_affinities.h: per-row bisection (independent rows, so threads do not change the
// result), then the symmetrisation by sorting (row, column) pairs.
#include "core/projection/tsne_affinities.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/projection/parallel.h"

namespace attnlab::projection {

double conditional_row(const double* sq_distance, int64_t k, double beta, double* p) {
  // Shifting by the nearest distance leaves p unchanged and keeps exp() from underflowing
  // to 0 for every neighbour when β is large.
  const double shift = *std::min_element(sq_distance, sq_distance + k);
  double sum = 0.0, weighted = 0.0;
  for (int64_t j = 0; j < k; ++j) {
    p[j] = std::exp(-beta * (sq_distance[j] - shift));
    sum += p[j];
    weighted += (sq_distance[j] - shift) * p[j];
  }
  for (int64_t j = 0; j < k; ++j) p[j] /= sum;
  // H = log Z + β E[d] (with the shifted distances and their Z).
  return std::log(sum) + beta * weighted / sum;
}

SparseRows perplexity_affinities(const Neighbours& nn, double perplexity, int threads) {
  const int64_t n = nn.n, k = nn.k;
  const double target = std::log(perplexity);
  std::vector<double> conditional(static_cast<size_t>(n * k));
  const int64_t block = 256;
  parallel_blocks((n + block - 1) / block, resolve_threads(threads), [&](int64_t b) {
    for (int64_t i = b * block; i < std::min(n, (b + 1) * block); ++i) {
      const double* d = nn.sq_distance.data() + i * k;
      double* p = conditional.data() + i * k;
      double beta = 1.0, lo = 0.0, hi = std::numeric_limits<double>::infinity();
      for (int step = 0; step < 200; ++step) {
        const double h = conditional_row(d, k, beta, p);
        if (std::abs(h - target) < 1e-5) break;
        if (h > target) {  // too flat: sharpen
          lo = beta;
          beta = std::isinf(hi) ? beta * 2.0 : 0.5 * (lo + hi);
        } else {
          hi = beta;
          beta = 0.5 * (lo + hi);
        }
      }
    }
  });

  SparseRows p = symmetrise(n, k, nn.index, conditional, Symmetrise::Sum);
  double total = 0.0;  // 2N up to rounding: each conditional row sums to 1
  for (double v : p.value) total += v;
  for (double& v : p.value) v /= total;
  return p;
}

}  // namespace attnlab::projection
