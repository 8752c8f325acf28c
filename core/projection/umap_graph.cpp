// umap_graph.h: smooth kNN distances, the fuzzy union, and the (a, b) curve fit.
#include "core/projection/umap_graph.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace attnlab::projection {

SparseRows fuzzy_graph(const Neighbours& nn, int n_neighbors) {
  const int64_t n = nn.n, k = nn.k;
  const double target = std::log2(static_cast<double>(n_neighbors));
  std::vector<double> weight(static_cast<size_t>(n * k));
  std::vector<double> d(static_cast<size_t>(k));
  for (int64_t i = 0; i < n; ++i) {
    double rho = 0.0, mean = 0.0;
    for (int64_t j = 0; j < k; ++j) {
      d[static_cast<size_t>(j)] = std::sqrt(nn.sq_distance[static_cast<size_t>(i * k + j)]);
      mean += d[static_cast<size_t>(j)];
      if (rho == 0.0 && d[static_cast<size_t>(j)] > 0.0) rho = d[static_cast<size_t>(j)];  // sorted: first non-zero
    }
    mean /= static_cast<double>(k);
    auto mass = [&](double sigma) {
      double s = 0.0;
      for (double dj : d) s += std::exp(-std::max(0.0, dj - rho) / sigma);
      return s;
    };
    // mass(σ) grows with σ: bisect, doubling the upper end until it brackets the target.
    double lo = 0.0, hi = std::numeric_limits<double>::infinity(), sigma = 1.0;
    for (int step = 0; step < 64; ++step) {
      const double m = mass(sigma);
      if (std::abs(m - target) < 1e-5) break;
      if (m > target) {
        hi = sigma;
        sigma = 0.5 * (lo + hi);
      } else {
        lo = sigma;
        sigma = std::isinf(hi) ? sigma * 2.0 : 0.5 * (lo + hi);
      }
    }
    sigma = std::max(sigma, 1e-3 * mean);
    if (!(sigma > 0.0)) sigma = 1.0;  // every neighbour at distance 0: all weights are 1
    for (int64_t j = 0; j < k; ++j)
      weight[static_cast<size_t>(i * k + j)] = std::exp(-std::max(0.0, d[static_cast<size_t>(j)] - rho) / sigma);
  }
  return symmetrise(n, k, nn.index, weight, Symmetrise::FuzzyUnion);
}

CurveParameters fit_curve(double min_dist, double spread) {
  constexpr int kSamples = 300;
  std::vector<double> xs(kSamples), ys(kSamples);
  for (int s = 0; s < kSamples; ++s) {
    xs[static_cast<size_t>(s)] = 3.0 * spread * s / (kSamples - 1);
    const double x = xs[static_cast<size_t>(s)];
    ys[static_cast<size_t>(s)] = x < min_dist ? 1.0 : std::exp(-(x - min_dist) / spread);
  }
  auto residual = [&](double a, double b) {
    double r = 0.0;
    for (int s = 0; s < kSamples; ++s) {
      const double g = 1.0 / (1.0 + a * std::pow(xs[static_cast<size_t>(s)], 2.0 * b));
      r += (g - ys[static_cast<size_t>(s)]) * (g - ys[static_cast<size_t>(s)]);
    }
    return r;
  };
  double a = 1.0, b = 1.0, lambda = 1e-3, current = residual(a, b);
  for (int it = 0; it < 500; ++it) {
    // Normal equations JᵀJ δ = −Jᵀr of g(x) = 1 / (1 + a x^2b).
    double jaa = 0, jab = 0, jbb = 0, ga = 0, gb = 0;
    for (int s = 0; s < kSamples; ++s) {
      const double x = xs[static_cast<size_t>(s)];
      if (x <= 0.0) continue;  // g(0) = 1 whatever a and b are
      const double p = std::pow(x, 2.0 * b);
      const double g = 1.0 / (1.0 + a * p);
      const double da = -p * g * g;
      const double db = -a * p * 2.0 * std::log(x) * g * g;
      const double r = g - ys[static_cast<size_t>(s)];
      jaa += da * da;
      jab += da * db;
      jbb += db * db;
      ga += da * r;
      gb += db * r;
    }
    const double m00 = jaa * (1.0 + lambda), m11 = jbb * (1.0 + lambda);
    const double det = m00 * m11 - jab * jab;
    if (det == 0.0) break;
    const double step_a = -(m11 * ga - jab * gb) / det;
    const double step_b = -(m00 * gb - jab * ga) / det;
    const double trial = (a + step_a > 0 && b + step_b > 0) ? residual(a + step_a, b + step_b) : std::numeric_limits<double>::infinity();
    if (trial < current) {
      const bool converged = current - trial < 1e-15 * (1.0 + current);
      a += step_a;
      b += step_b;
      current = trial;
      lambda *= 0.3;
      if (converged) break;
    } else {
      lambda *= 10.0;
      if (lambda > 1e12) break;
    }
  }
  return {a, b};
}

}  // namespace attnlab::projection
