// UMAP (McInnes, Healy & Melville 2018, arXiv:1802.03426), reimplemented from the paper
// and umap-learn's documentation — no code taken from umap-learn:
//  - exact nearest neighbours (neighbours.h; umap-learn approximates them by NN-descent),
//    the fuzzy graph and the (a, b) curve (umap_graph.h);
//  - initialisation by PCA, NOT the paper's spectral embedding: the top `dims` principal
//    components, each rescaled to [0, 10] (the box umap-learn rescales its spectral layout
//    to), plus N(0, 1e-4²) noise from the seed so that the seed matters;
//  - the paper's Algorithm 5: stochastic gradient descent on the fuzzy cross-entropy, each
//    edge sampled in proportion to its weight (every 1/w·max w epochs; edges under
//    max w / n_epochs never are), both ends moved, negative_sample_rate uniformly drawn
//    points pushed away per sample, each gradient coordinate clipped to [−4, 4], learning
//    rate decaying linearly to 0; attraction −2ab d^2(b−1) / (1 + a d^2b), repulsion
//    2b / ((0.001 + d²)(1 + a d^2b)) (the 0.001 keeps it finite at d = 0);
//  - n_epochs 500 for N ≤ 10 000, 200 above (umap-learn's defaults).
// Deterministic for (data, options): the descent is single-threaded; threads only speed up
// the neighbour search, whose result does not depend on them.
#pragma once

#include <cstdint>
#include <vector>

#include "core/projection/matrix.h"

namespace attnlab::projection {

struct UmapOptions {
  int dims = 2;
  int n_neighbors = 15;  // counting the point itself; in [2, N)
  double min_dist = 0.1;
  double spread = 1.0;
  int n_epochs = 0;  // 0: 500 for N <= 10 000, else 200
  double learning_rate = 1.0;
  int negative_sample_rate = 5;
  uint64_t seed = 0;
  int threads = 0;
};

struct UmapResult {
  int64_t n = 0;
  int dims = 2;
  std::vector<double> coords;  // N×dims
  double a = 0.0;              // the fitted curve 1 / (1 + a d^2b)
  double b = 0.0;
};

// Progress: total = 100 + n_epochs; the neighbour search and graph are the first 100.
UmapResult umap(const MatrixView& x, const UmapOptions& options = {}, const Progress& progress = {});

}  // namespace attnlab::projection
