// sparse_rows.h: every edge as (i, j) and (j, i), sorted, equal pairs merged.
#include "core/projection/sparse_rows.h"

#include <algorithm>
#include <tuple>

namespace attnlab::projection {

SparseRows symmetrise(int64_t n, int64_t k, const std::vector<int64_t>& index,
                      const std::vector<double>& value, Symmetrise how) {
  std::vector<std::tuple<int64_t, int64_t, double>> entries;
  entries.reserve(static_cast<size_t>(2 * n * k));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < k; ++j) {
      const auto e = static_cast<size_t>(i * k + j);
      entries.emplace_back(i, index[e], value[e]);
      entries.emplace_back(index[e], i, value[e]);
    }
  // Sorting on the value too fixes the order in which a pair's two values are combined.
  std::sort(entries.begin(), entries.end());
  SparseRows s;
  s.n = n;
  s.row_start.assign(static_cast<size_t>(n + 1), 0);
  for (size_t e = 0; e < entries.size();) {
    const int64_t row = std::get<0>(entries[e]), col = std::get<1>(entries[e]);
    double v = std::get<2>(entries[e]);
    // A kNN graph has each directed edge once, so a pair has at most two values.
    for (++e; e < entries.size() && std::get<0>(entries[e]) == row && std::get<1>(entries[e]) == col; ++e) {
      const double w = std::get<2>(entries[e]);
      v = how == Symmetrise::Sum ? v + w : v + w - v * w;
    }
    s.column.push_back(col);
    s.value.push_back(v);
    ++s.row_start[static_cast<size_t>(row + 1)];
  }
  for (int64_t i = 0; i < n; ++i) s.row_start[static_cast<size_t>(i + 1)] += s.row_start[static_cast<size_t>(i)];
  return s;
}

}  // namespace attnlab::projection
