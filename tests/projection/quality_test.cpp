// The quality measures against a direct transcription of their definitions (full sorts,
// no shortcuts), and their fixed points; the neighbour search's tie rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "core/projection/neighbours.h"
#include "core/projection/quality.h"
#include "core/projection/random.h"

namespace attnlab::projection {
namespace {

// i's other points ordered by distance, ties by index.
template <typename T>
std::vector<int64_t> ranked(const std::vector<T>& m, int64_t n, int64_t d, int64_t i) {
  std::vector<std::pair<double, int64_t>> dist;
  for (int64_t j = 0; j < n; ++j) {
    if (j == i) continue;
    double s = 0;
    for (int64_t c = 0; c < d; ++c) s += std::pow(static_cast<double>(m[static_cast<size_t>(i * d + c)]) - static_cast<double>(m[static_cast<size_t>(j * d + c)]), 2);
    dist.emplace_back(s, j);
  }
  std::sort(dist.begin(), dist.end());
  std::vector<int64_t> order;
  for (const auto& p : dist) order.push_back(p.second);
  return order;
}

// Venna & Kaski's T(k), word for word.
double reference_trust(const std::vector<float>& x, int64_t d, const std::vector<double>& y, int64_t dy, int64_t n, int64_t k) {
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    const auto rx = ranked(x, n, d, i), ry = ranked(y, n, dy, i);
    for (int64_t m = 0; m < k; ++m) {
      const int64_t j = ry[static_cast<size_t>(m)];
      const auto at = std::find(rx.begin(), rx.end(), j) - rx.begin();
      if (at >= k) sum += static_cast<double>(at + 1 - k);
    }
  }
  return 1 - 2.0 / (n * k * (2.0 * n - 3.0 * k - 1)) * sum;
}

struct RandomPair {
  std::vector<float> x;
  std::vector<double> y;
};
RandomPair random_pair(int64_t n, int64_t d, uint64_t seed) {
  SplitMix64 rng(seed);
  RandomPair p;
  for (int64_t v = 0; v < n * d; ++v) p.x.push_back(static_cast<float>(rng.normal()));
  // y: x's first two coordinates plus noise, so the projection is neither perfect nor random.
  for (int64_t i = 0; i < n; ++i)
    for (int64_t c = 0; c < 2; ++c) p.y.push_back(static_cast<double>(p.x[static_cast<size_t>(i * d + c)]) + 0.5 * rng.normal());
  return p;
}

TEST(ProjectionQuality, TrustworthinessMatchesDefinition) {
  for (int64_t k : {1, 3, 7}) {
    const auto p = random_pair(60, 5, static_cast<uint64_t>(k));
    const double ours = trustworthiness(MatrixView(p.x, 60, 5), CoordsView(p.y, 60, 2), k, 2);
    EXPECT_NEAR(ours, reference_trust(p.x, 5, p.y, 2, 60, k), 1e-12) << "k = " << k;
    EXPECT_LT(ours, 1.0);
  }
}

TEST(ProjectionQuality, KnnPreservationMatchesDefinition) {
  const auto p = random_pair(50, 4, 9);
  double expected = 0;
  for (int64_t i = 0; i < 50; ++i) {
    auto rx = ranked(p.x, 50, 4, i), ry = ranked(p.y, 50, 2, i);
    rx.resize(5);
    ry.resize(5);
    for (int64_t j : ry) expected += std::count(rx.begin(), rx.end(), j) / 5.0;
  }
  EXPECT_NEAR(knn_preservation(MatrixView(p.x, 50, 4), CoordsView(p.y, 50, 2), 5), expected / 50, 1e-12);
}

TEST(ProjectionQuality, IdentityIsPerfect) {
  const auto p = random_pair(40, 3, 4);
  const std::vector<double> same(p.x.begin(), p.x.end());
  EXPECT_DOUBLE_EQ(trustworthiness(MatrixView(p.x, 40, 3), CoordsView(same, 40, 3), 5), 1.0);
  EXPECT_DOUBLE_EQ(knn_preservation(MatrixView(p.x, 40, 3), CoordsView(same, 40, 3), 5), 1.0);
}

TEST(ProjectionQuality, NeighboursBreakTiesByIndexAndIgnoreThreads) {
  // Points on a line at 0, 1, 2, ... 9: point 5's neighbours 4 and 6 tie; 4 comes first.
  std::vector<float> line(10);
  std::iota(line.begin(), line.end(), 0.0f);
  const Neighbours nn = exact_neighbours(MatrixView(line, 10, 1), 4, 1);
  EXPECT_EQ(std::vector<int64_t>(nn.index.begin() + 20, nn.index.begin() + 24), (std::vector<int64_t>{4, 6, 3, 7}));
  EXPECT_EQ(std::vector<double>(nn.sq_distance.begin() + 20, nn.sq_distance.begin() + 24), (std::vector<double>{1, 1, 4, 4}));
  const auto p = random_pair(300, 6, 1);  // 3 blocks of rows
  const Neighbours one = exact_neighbours(MatrixView(p.x, 300, 6), 10, 1);
  const Neighbours three = exact_neighbours(MatrixView(p.x, 300, 6), 10, 3);
  EXPECT_EQ(one.index, three.index);
  EXPECT_EQ(one.sq_distance, three.sq_distance);
}

}  // namespace
}  // namespace attnlab::projection
