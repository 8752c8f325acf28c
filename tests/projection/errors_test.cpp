// Every entry point refuses bad input with a std::invalid_argument that names the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/projection/pca.h"
#include "core/projection/quality.h"
#include "core/projection/tsne.h"
#include "core/projection/umap.h"

namespace attnlab::projection {
namespace {

void expect_refusal(const std::function<void()>& call, const std::string& fragment) {
  try {
    call();
    ADD_FAILURE() << "no exception; expected one mentioning \"" << fragment << "\"";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

std::vector<float> ramp(int64_t n, int64_t d) {
  std::vector<float> v(static_cast<size_t>(n * d));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(std::sin(0.7 * static_cast<double>(i)));
  return v;
}

TEST(ProjectionErrors, TooFewPoints) {
  const auto x = ramp(3, 4);
  expect_refusal([&] { pca(MatrixView(x, 3, 4)); }, "N = 3 points; at least 4 are needed");
  expect_refusal([&] { tsne(MatrixView(x, 3, 4)); }, "t-SNE: N = 3 points");
  expect_refusal([&] { umap(MatrixView(x, 3, 4)); }, "UMAP: N = 3 points");
}

TEST(ProjectionErrors, NonFiniteValuesNamed) {
  auto x = ramp(10, 3);
  x[2 * 3 + 1] = std::numeric_limits<float>::quiet_NaN();
  expect_refusal([&] { tsne(MatrixView(x, 10, 3)); }, "value at row 2, column 1 is NaN");
  x[2 * 3 + 1] = 0;
  x[9 * 3 + 2] = -std::numeric_limits<float>::infinity();
  expect_refusal([&] { umap(MatrixView(x, 10, 3)); }, "value at row 9, column 2 is infinite");
  expect_refusal([&] { pca(MatrixView(x, 10, 3)); }, "PCA: value at row 9");
}

TEST(ProjectionErrors, PerplexityAndNeighbourCounts) {
  const auto x = ramp(20, 3);
  TsneOptions t;  // perplexity 30 with 20 points
  expect_refusal([&] { tsne(MatrixView(x, 20, 3), t); }, "perplexity 30.000000 is out of range for N = 20");
  UmapOptions u;
  u.n_neighbors = 20;
  expect_refusal([&] { umap(MatrixView(x, 20, 3), u); }, "n_neighbors = 20 is out of range for N = 20");
  const std::vector<double> y(40, 0.5);
  expect_refusal([&] { knn_preservation(MatrixView(x, 20, 3), CoordsView(y, 20, 2), 20); },
                 "k = 20 neighbours is out of range");
  expect_refusal([&] { trustworthiness(MatrixView(x, 20, 3), CoordsView(y, 20, 2), 10); },
                 "k = 10 must be less than N / 2");
  expect_refusal([&] { pca(MatrixView(x, 20, 3), 4); }, "PCA: k = 4 components is out of range");
}

TEST(ProjectionErrors, ShapeMismatches) {
  const auto x = ramp(10, 3);
  expect_refusal([&] { MatrixView(x, 10, 4); }, "30 values cannot be viewed as 10×4");
  const std::vector<double> y(18, 0.0);
  expect_refusal([&] { knn_preservation(MatrixView(x, 10, 3), CoordsView(y, 9, 2), 3); },
                 "the data has 10 points but the projection 9");
}

}  // namespace
}  // namespace attnlab::projection
