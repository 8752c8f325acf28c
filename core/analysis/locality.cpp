// Locality (SPEC §3): mean attention distance per head, Σ_j a_ij·‖pos_i − pos_j‖ in patches
// of the layer's grid, averaged over the grid queries. Rows come from the trace a chunk of
// queries at a time and are spread onto the tokens first (pooled keys share their weight
// among the positions they cover), so memory stays O(chunk·N) and no N×N map exists.
#include "core/analysis/locality.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace attnlab::analysis {

using attention::TokenLayout;
using attention::TraceQueryError;

namespace {

// (y, x) of grid tokens [g0, g1) as float64 (n, 2) on `device`.
at::Tensor grid_positions(const TokenLayout& layout, int64_t g0, int64_t g1, c10::Device device) {
  const at::Tensor g = at::arange(g0, g1, at::TensorOptions().dtype(at::kLong).device(device));
  return at::stack({g.div(layout.width, "floor"), g.remainder(layout.width)}, 1).to(at::kDouble);
}

// Euclidean distances (n, m) between positions (n, 2) and (m, 2), from the differences
// directly (cdist may go through a matrix product, which is not exact).
at::Tensor distances(const at::Tensor& from, const at::Tensor& to) {
  return (from.unsqueeze(1) - to.unsqueeze(0)).pow(2).sum(-1).sqrt();
}

}  // namespace

at::Tensor mean_attention_distance(const attention::AttentionTrace& trace, int64_t b,
                                   int64_t chunk_rows) {
  if (chunk_rows < 1)
    throw std::invalid_argument("mean_attention_distance: chunk_rows must be >= 1, got " +
                                std::to_string(chunk_rows));
  const TokenLayout& layout = trace.layout;
  const int64_t p = layout.num_prefix(), grid = layout.grid_tokens();
  if (grid == 0)
    throw TraceQueryError("mean attention distance needs a token grid, the layer has none (" +
                          layout.describe() + ")");
  at::Tensor total = at::zeros({trace.heads}, at::kDouble);
  for (int64_t g0 = 0; g0 < grid; g0 += chunk_rows) {
    const int64_t g1 = std::min(grid, g0 + chunk_rows);
    const at::Tensor queries = at::arange(p + g0, p + g1, at::kLong);
    at::Tensor dist;  // (n, grid), the same for every head: computed once per chunk
    for (int64_t h = 0; h < trace.heads; ++h) {
      const at::Tensor rows = trace.rows(b, h, queries);  // (n, K) on the trace's device
      // Only grid keys have a position: prefix columns are dropped, not renormalised away.
      const at::Tensor on_grid = attention::rows_on_tokens(rows, trace.group_of(h).keys, layout)
                                     .slice(1, p)
                                     .to(at::kDouble);
      if (!dist.defined())
        dist = distances(grid_positions(layout, g0, g1, rows.device()),
                         grid_positions(layout, 0, grid, rows.device()));
      total[h] += (on_grid * dist).sum().cpu();
    }
  }
  return total / static_cast<double>(grid);
}

double attention_distance(const at::Tensor& row_on_tokens, const TokenLayout& layout,
                          int64_t query) {
  if (!row_on_tokens.defined() || row_on_tokens.dim() != 1 ||
      row_on_tokens.size(0) != layout.tokens())
    throw std::invalid_argument(
        "attention_distance: the row must be 1-D with one weight per "
        "token of " +
        layout.describe() + " (" + std::to_string(layout.tokens()) + ")");
  if (query < layout.num_prefix() || query >= layout.tokens())
    throw TraceQueryError("attention_distance: token " + std::to_string(query) +
                          " is not a grid token of " + layout.describe() +
                          " (prefix tokens have no position)");
  const int64_t p = layout.num_prefix(), g = query - p;
  const at::Tensor from = grid_positions(layout, g, g + 1, at::kCPU);
  const at::Tensor dist =
      distances(from, grid_positions(layout, 0, layout.grid_tokens(), at::kCPU));
  return (row_on_tokens.slice(0, p).to(at::kCPU, at::kDouble) * dist[0]).sum().item<double>();
}

}  // namespace attnlab::analysis
