// A symmetric sparse matrix in compressed rows, built from a directed k-nearest-neighbour
// graph by merging each edge with its reverse: t-SNE adds the two conditional
// probabilities (P + Pᵀ), UMAP takes their fuzzy union a + b − ab (McInnes et al. 2018,
// section 3.1). One construction for both, so both are deterministic the same way.
#pragma once

#include <cstdint>
#include <vector>

namespace attnlab::projection {

struct SparseRows {
  int64_t n = 0;
  std::vector<int64_t> row_start;  // N + 1
  std::vector<int64_t> column;     // by row, columns increasing
  std::vector<double> value;
};

enum class Symmetrise { Sum, FuzzyUnion };

// index, value: N×k, row i's edges i → index[i·k + j]. Zero-valued edges are kept.
SparseRows symmetrise(int64_t n, int64_t k, const std::vector<int64_t>& index,
                      const std::vector<double>& value, Symmetrise how);

}  // namespace attnlab::projection
