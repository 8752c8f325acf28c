// neighbours.h: all-pairs distances by blocks (Eigen's matrix product) and a partial sort
// per row.
#include "core/projection/neighbours.h"

#include <Eigen/Dense>

#include <algorithm>
#include <numeric>

#include "core/projection/parallel.h"

namespace attnlab::projection {

namespace {
using RowMatrixD = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
}  // namespace

template <typename T>
DistanceRows::DistanceRows(const BasicMatrixView<T>& x) : n_(x.rows), d_(x.cols) {
  x_.resize(static_cast<size_t>(n_ * d_));
  norms_.resize(static_cast<size_t>(n_));
  for (int64_t i = 0; i < n_; ++i) {
    double s = 0.0;
    for (int64_t j = 0; j < d_; ++j) {
      const double v = static_cast<double>(x.row(i)[j]);
      x_[static_cast<size_t>(i * d_ + j)] = v;
      s += v * v;
    }
    norms_[static_cast<size_t>(i)] = s;
  }
}

void DistanceRows::compute(int64_t begin, int64_t end, std::vector<double>& out) const {
  const int64_t m = end - begin;
  out.resize(static_cast<size_t>(m * n_));
  Eigen::Map<const RowMatrixD> all(x_.data(), n_, d_);
  Eigen::Map<RowMatrixD> dots(out.data(), m, n_);
  dots.noalias() = all.middleRows(begin, m) * all.transpose();
  for (int64_t r = 0; r < m; ++r) {
    const double ni = norms_[static_cast<size_t>(begin + r)];
    double* row = out.data() + r * n_;
    for (int64_t j = 0; j < n_; ++j)
      row[j] = std::max(0.0, ni + norms_[static_cast<size_t>(j)] - 2.0 * row[j]);
    row[begin + r] = 0.0;
  }
}

template <typename T>
Neighbours exact_neighbours(const BasicMatrixView<T>& x, int64_t k, int threads,
                            const Progress& progress) {
  validate_matrix(x, "nearest neighbours");
  validate_neighbour_count(k, x.rows, "nearest neighbours");
  const int64_t n = x.rows;
  const DistanceRows distances(x);
  Neighbours result;
  result.n = n;
  result.k = k;
  result.index.resize(static_cast<size_t>(n * k));
  result.sq_distance.resize(static_cast<size_t>(n * k));
  const int64_t blocks = (n + kDistanceBlockRows - 1) / kDistanceBlockRows;
  parallel_blocks(
      blocks, resolve_threads(threads),
      [&](int64_t b) {
        const int64_t begin = b * kDistanceBlockRows;
        const int64_t end = std::min(n, begin + kDistanceBlockRows);
        std::vector<double> block;
        distances.compute(begin, end, block);
        std::vector<int64_t> order(static_cast<size_t>(n - 1));
        for (int64_t i = begin; i < end; ++i) {
          const double* row = block.data() + (i - begin) * n;
          // Every index but i itself.
          std::iota(order.begin(), order.begin() + i, int64_t{0});
          std::iota(order.begin() + i, order.end(), i + 1);
          auto closer = [row](int64_t a, int64_t c) {
            return row[a] < row[c] || (row[a] == row[c] && a < c);
          };
          std::nth_element(order.begin(), order.begin() + (k - 1), order.end(), closer);
          std::sort(order.begin(), order.begin() + k, closer);
          for (int64_t j = 0; j < k; ++j) {
            result.index[static_cast<size_t>(i * k + j)] = order[static_cast<size_t>(j)];
            result.sq_distance[static_cast<size_t>(i * k + j)] = row[order[static_cast<size_t>(j)]];
          }
        }
      },
      progress, "nearest neighbours");
  return result;
}

template DistanceRows::DistanceRows(const BasicMatrixView<float>&);
template DistanceRows::DistanceRows(const BasicMatrixView<double>&);
template Neighbours exact_neighbours(const BasicMatrixView<float>&, int64_t, int, const Progress&);
template Neighbours exact_neighbours(const BasicMatrixView<double>&, int64_t, int, const Progress&);

}  // namespace attnlab::projection
