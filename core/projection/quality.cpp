// quality.h: neighbour lists from neighbours.h; the data's ranks from its distance rows.
#include "core/projection/quality.h"

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "core/projection/neighbours.h"
#include "core/projection/parallel.h"

namespace attnlab::projection {

namespace {
void validate_pair(const MatrixView& x, const CoordsView& y, int64_t k, const char* what) {
  validate_matrix(x, what);
  validate_matrix(y, what);
  if (x.rows != y.rows)
    throw std::invalid_argument(std::string(what) + ": the data has " + std::to_string(x.rows) +
                                " points but the projection " + std::to_string(y.rows));
  validate_neighbour_count(k, x.rows, what);
}
}  // namespace

double trustworthiness(const MatrixView& x, const CoordsView& y, int64_t k, int threads,
                       const Progress& progress) {
  validate_pair(x, y, k, "trustworthiness");
  const int64_t n = x.rows;
  if (2 * k >= n)
    throw std::invalid_argument("trustworthiness: k = " + std::to_string(k) +
                                " must be less than N / 2 = " + std::to_string(n / 2.0));
  threads = resolve_threads(threads);
  const Neighbours near_x = exact_neighbours(x, k, threads);
  const Neighbours near_y = exact_neighbours(y, k, threads);
  const DistanceRows distances(x);
  std::vector<double> penalty(static_cast<size_t>(n), 0.0);
  const int64_t blocks = (n + kDistanceBlockRows - 1) / kDistanceBlockRows;
  parallel_blocks(
      blocks, threads,
      [&](int64_t b) {
        const int64_t begin = b * kDistanceBlockRows, end = std::min(n, begin + kDistanceBlockRows);
        std::vector<double> block;
        distances.compute(begin, end, block);
        for (int64_t i = begin; i < end; ++i) {
          const double* row = block.data() + (i - begin) * n;
          const int64_t* in_x = near_x.index.data() + i * k;
          for (int64_t m = 0; m < k; ++m) {
            const int64_t j = near_y.index[static_cast<size_t>(i * k + m)];
            if (std::find(in_x, in_x + k, j) != in_x + k) continue;
            // j's rank in the data: 1 + the points (not i) before it, ties by index.
            int64_t rank = 1;
            for (int64_t l = 0; l < n; ++l)
              if (l != i && (row[l] < row[j] || (row[l] == row[j] && l < j))) ++rank;
            penalty[static_cast<size_t>(i)] += static_cast<double>(rank - k);
          }
        }
      },
      progress, "trustworthiness");
  double sum = 0.0;
  for (double p : penalty) sum += p;
  const auto nd = static_cast<double>(n), kd = static_cast<double>(k);
  return 1.0 - 2.0 / (nd * kd * (2.0 * nd - 3.0 * kd - 1.0)) * sum;
}

double knn_preservation(const MatrixView& x, const CoordsView& y, int64_t k, int threads,
                        const Progress& progress) {
  validate_pair(x, y, k, "k-NN preservation");
  const int64_t n = x.rows;
  threads = resolve_threads(threads);
  const Neighbours near_x = exact_neighbours(x, k, threads, progress);
  const Neighbours near_y = exact_neighbours(y, k, threads, progress);
  double sum = 0.0;
  std::vector<int64_t> a(static_cast<size_t>(k)), b(static_cast<size_t>(k)), common;
  for (int64_t i = 0; i < n; ++i) {
    std::copy(near_x.index.begin() + i * k, near_x.index.begin() + (i + 1) * k, a.begin());
    std::copy(near_y.index.begin() + i * k, near_y.index.begin() + (i + 1) * k, b.begin());
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    common.clear();
    std::set_intersection(a.begin(), a.end(), b.begin(), b.end(), std::back_inserter(common));
    sum += static_cast<double>(common.size()) / static_cast<double>(k);
  }
  return sum / static_cast<double>(n);
}

}  // namespace attnlab::projection
