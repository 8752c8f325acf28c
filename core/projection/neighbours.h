// Exact k nearest neighbours by brute force (Euclidean), for t-SNE's perplexity
// calibration, UMAP's fuzzy graph and the quality measures. Exact, not approximate (no
// NN-descent, no trees): the projections are compared with references that use exact
// neighbours (sklearn's TSNE), and at N ≤ ~10 000 a blocked matrix product computes all
// N² distances in seconds. Ties are broken by the smaller index, so the lists are
// deterministic.
#pragma once

#include <cstdint>
#include <vector>

#include "core/projection/matrix.h"

namespace attnlab::projection {

struct Neighbours {
  int64_t n = 0;
  int64_t k = 0;
  std::vector<int64_t> index;       // N×k: row i lists i's neighbours, nearest first, not i
  std::vector<double> sq_distance;  // N×k: their squared Euclidean distances
};

// Squared Euclidean distances from blocks of rows to every row, in double, as
// |a|² + |b|² − 2 a·b through a matrix product (clamped at 0; the diagonal is set to 0).
class DistanceRows {
 public:
  template <typename T>
  explicit DistanceRows(const BasicMatrixView<T>& x);
  int64_t size() const { return n_; }
  // out: (end − begin)×N, row-major.
  void compute(int64_t begin, int64_t end, std::vector<double>& out) const;

 private:
  int64_t n_ = 0;
  int64_t d_ = 0;
  std::vector<double> x_;      // N×D copy in double
  std::vector<double> norms_;  // |x_i|²
};

// The k nearest neighbours of every row (validate_neighbour_count's rule: 1 <= k < N).
// `threads` as resolve_threads(); the result does not depend on it.
template <typename T>
Neighbours exact_neighbours(const BasicMatrixView<T>& x, int64_t k, int threads = 0,
                            const Progress& progress = {});

// The block size (rows) DistanceRows users work in: 128 rows × N doubles per thread.
constexpr int64_t kDistanceBlockRows = 128;

}  // namespace attnlab::projection
