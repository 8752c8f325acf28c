// PCA on data whose sample covariance is known exactly: the explained variances, ratios
// and directions, by both routes (covariance for D <= N, Gram for D > N); the sign rule.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "core/projection/pca.h"
#include "core/projection/random.h"

namespace attnlab::projection {
namespace {

// N points in D dimensions whose centred sample covariance is R diag(var) Rᵀ, where R's
// columns are the first var.size() unit vectors rotated by 30° in each plane (c, c + 1):
// random Gaussian scores, centred and orthonormalised (Gram–Schmidt), scaled by
// √((N − 1) var_c), placed along R's columns, shifted by a mean of 5.
struct KnownPca {
  std::vector<float> x;
  std::vector<std::vector<double>> direction;  // R's columns
};

KnownPca known_covariance(int64_t n, int64_t d, const std::vector<double>& var, uint64_t seed) {
  const auto k = static_cast<int64_t>(var.size());
  SplitMix64 rng(seed);
  std::vector<std::vector<double>> z(static_cast<size_t>(k), std::vector<double>(static_cast<size_t>(n)));
  for (int64_t c = 0; c < k; ++c) {
    auto& col = z[static_cast<size_t>(c)];
    for (double& v : col) v = rng.normal();
    for (int pass = 0; pass < 2; ++pass) {  // twice: Gram–Schmidt to full precision
      double mean = 0;
      for (double v : col) mean += v / static_cast<double>(n);
      for (double& v : col) v -= mean;
      for (int64_t p = 0; p < c; ++p) {
        double dot = 0;
        for (int64_t i = 0; i < n; ++i) dot += col[static_cast<size_t>(i)] * z[static_cast<size_t>(p)][static_cast<size_t>(i)];
        for (int64_t i = 0; i < n; ++i) col[static_cast<size_t>(i)] -= dot * z[static_cast<size_t>(p)][static_cast<size_t>(i)];
      }
      double norm = 0;
      for (double v : col) norm += v * v;
      for (double& v : col) v /= std::sqrt(norm);
    }
  }
  KnownPca out;
  const double co = std::cos(M_PI / 6), si = std::sin(M_PI / 6);
  for (int64_t c = 0; c < k; ++c) {
    std::vector<double> dir(static_cast<size_t>(d), 0.0);
    dir[static_cast<size_t>(c)] = co;
    dir[static_cast<size_t>((c + k) % d)] = si;  // a partner axis outside the first k
    out.direction.push_back(dir);
  }
  // The partner axes c + k are distinct and not among the first k, so the directions stay
  // orthonormal as long as 2k <= D.
  out.x.assign(static_cast<size_t>(n * d), 5.0f);
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < k; ++c) {
      const double s = z[static_cast<size_t>(c)][static_cast<size_t>(i)] * std::sqrt((n - 1) * var[static_cast<size_t>(c)]);
      for (int64_t j = 0; j < d; ++j)
        out.x[static_cast<size_t>(i * d + j)] += static_cast<float>(s * out.direction[static_cast<size_t>(c)][static_cast<size_t>(j)]);
    }
  return out;
}

// The data are stored as float32: each value moves by at most 2^-24 of itself (|x| <= ~5 +
// a few σ), so each covariance entry by about 2·2^-24·E|x_i x_j| and, by Weyl's inequality,
// each eigenvalue by at most that perturbation's norm; with the mean of 5 it is bounded by
// 2·2^-24·(25 + trace)·D. The test uses that bound.
double float_storage_tolerance(double trace, int64_t d) { return 2.0 * std::ldexp(1.0, -24) * (25.0 + trace) * static_cast<double>(d); }

void expect_known(const KnownPca& data, int64_t n, int64_t d, const std::vector<double>& var) {
  const auto k = static_cast<int64_t>(var.size());
  const PcaResult r = pca(MatrixView(data.x, n, d), k);
  double trace = 0;
  for (double v : var) trace += v;
  const double tol = float_storage_tolerance(trace, d);
  EXPECT_NEAR(r.total_variance, trace, tol);
  for (int64_t c = 0; c < k; ++c) {
    EXPECT_NEAR(r.explained_variance[static_cast<size_t>(c)], var[static_cast<size_t>(c)], tol) << "component " << c;
    EXPECT_NEAR(r.explained_variance_ratio[static_cast<size_t>(c)], var[static_cast<size_t>(c)] / trace, tol / trace * 2);
    double dot = 0;
    for (int64_t j = 0; j < d; ++j) dot += r.components[static_cast<size_t>(c * d + j)] * data.direction[static_cast<size_t>(c)][static_cast<size_t>(j)];
    // Eigenvector perturbation ≤ ‖E‖ / gap (Davis–Kahan); the gaps here are ≥ 1.
    EXPECT_NEAR(std::abs(dot), 1.0, 10 * tol) << "component " << c;
    // The coordinates' sample variance is the explained variance, and their mean is 0.
    double mean = 0, sq = 0;
    for (int64_t i = 0; i < n; ++i) mean += r.coords[static_cast<size_t>(i * k + c)] / static_cast<double>(n);
    for (int64_t i = 0; i < n; ++i) sq += std::pow(r.coords[static_cast<size_t>(i * k + c)] - mean, 2);
    EXPECT_NEAR(mean, 0.0, 1e-9);
    EXPECT_NEAR(sq / static_cast<double>(n - 1), r.explained_variance[static_cast<size_t>(c)], 1e-9 * trace);
  }
  for (int64_t j = 0; j < d; ++j) EXPECT_NEAR(r.mean[static_cast<size_t>(j)], 5.0, 1e-5);
}

TEST(ProjectionPca, ExplainedVarianceOfKnownCovariance) {
  const std::vector<double> var = {9.0, 4.0, 1.0};
  expect_known(known_covariance(200, 8, var, 1), 200, 8, var);
}

TEST(ProjectionPca, GramRouteWhenDimensionsExceedPoints) {
  const std::vector<double> var = {16.0, 2.0};
  expect_known(known_covariance(12, 40, var, 2), 12, 40, var);
}

TEST(ProjectionPca, SignRuleMakesLargestLoadingPositive) {
  const std::vector<double> var = {9.0, 4.0, 1.0};
  const KnownPca data = known_covariance(100, 6, var, 3);
  std::vector<float> negated(data.x);
  for (float& v : negated) v = -v;
  const PcaResult a = pca(MatrixView(data.x, 100, 6), 3);
  const PcaResult b = pca(MatrixView(negated, 100, 6), 3);
  for (int64_t c = 0; c < 3; ++c) {
    size_t best = 0;
    for (size_t j = 0; j < 6; ++j)
      if (std::abs(a.components[static_cast<size_t>(c) * 6 + j]) > std::abs(a.components[static_cast<size_t>(c) * 6 + best])) best = j;
    EXPECT_GT(a.components[static_cast<size_t>(c) * 6 + best], 0.0);
  }
  // −X has the same covariance, so the rule gives the same components and negated scores.
  for (size_t v = 0; v < a.components.size(); ++v) EXPECT_NEAR(a.components[v], b.components[v], 1e-9);
  for (size_t v = 0; v < a.coords.size(); ++v) EXPECT_NEAR(a.coords[v], -b.coords[v], 1e-6);
}

TEST(ProjectionPca, ReportsProgressAndCancels) {
  const std::vector<double> var = {9.0, 4.0};
  const KnownPca data = known_covariance(50, 4, var, 4);
  int64_t last = -1;
  pca(MatrixView(data.x, 50, 4), 2, [&](int64_t done, int64_t total) {
    EXPECT_EQ(total, 3);
    last = done;
    return true;
  });
  EXPECT_EQ(last, 3);
  EXPECT_THROW(pca(MatrixView(data.x, 50, 4), 2, [](int64_t done, int64_t) { return done < 1; }),
               ProjectionCancelled);
}

}  // namespace
}  // namespace attnlab::projection
