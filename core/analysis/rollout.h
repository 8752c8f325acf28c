// Attention rollout (SPEC §3): R = Π_l norm(r·Â_l + (1−r)·I), Â_l the head-fused map of
// layer l, rows renormalised to sum 1 (sum over the last axis, keepdim), residual weight r
// (0.5 by default), optional discard ratio (the smallest fraction of Â_l's entries outside
// the prefix-token columns set to 0, before the residual). Every switch is explicit and is
// returned with the result.
//
// Single query: a chain of vector-matrix products from the last layer back to the first,
// each Aᵀ·v through AttentionTrace::apply_transposed — O(L·N·d) on linear mechanisms,
// never N×N — when fusion is mean and nothing is discarded (max/min and discarding need
// explicit rows; those runs are bounded by max_tokens). Across hierarchical stages a
// token of a coarse grid maps to the finer grid before it by area overlap.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "core/analysis/attention_maps.h"

namespace attnlab::analysis {

struct RolloutOptions {
  HeadFusion fusion = HeadFusion::Mean;
  double residual = 0.5;       // r; 0 gives I, 1 gives the bare attention product
  double discard_ratio = 0.0;  // in [0, 1)
  bool renormalize = true;     // rows of r·Â + (1−r)·I divided by their sums
  int64_t max_tokens = 4096;   // explicit-path limit (per layer, N)
};

struct RolloutResult {
  attention::TokenLayout layout;  // the first layer's: where the weights live
  at::Tensor weights;             // (layout.tokens(),) float32 on CPU
  bool implicit_path = false;     // true when computed by vector products only
  RolloutOptions options;
};

// Row `query` (a token of the LAST layer's layout) of R over the first layer's tokens.
RolloutResult rollout_query(const std::vector<const attention::AttentionTrace*>& layers, int64_t b,
                            int64_t query, const RolloutOptions& options = {});
// uᵀR for a readout u (N_last,) over the last layer's tokens (the mean of its grid rows
// for a classifier that pools every token): rollout_query with a vector for the one-hot.
RolloutResult rollout_of_readout(const std::vector<const attention::AttentionTrace*>& layers,
                                 int64_t b, const at::Tensor& readout,
                                 const RolloutOptions& options = {});
// The whole R: (N_last, N_first), explicit; refused (TraceQueryError) above max_tokens.
at::Tensor rollout_matrix(const std::vector<const attention::AttentionTrace*>& layers, int64_t b,
                          const RolloutOptions& options = {});

// A layer's head-fused map given explicitly, for rollouts of maps other than the traces'
// own attention (gradient-weighted rollout): fused (N, N) on the layout's tokens.
struct FusedLayer {
  attention::TokenLayout layout;
  at::Tensor fused;
};
// uᵀR for such layers: `readout` (N_last,) weights rows of R (a one-hot row, or the mean
// of several rows), carried back from the last layer as rollout_query does, so each layer
// costs O(N²), never the N³ of forming R. The same residual, discard and renormalisation
// switches (options.fusion is not used: the maps are fused already). Returns (N_first,)
// float32 on CPU; refused above max_tokens.
at::Tensor rollout_readout(const std::vector<FusedLayer>& layers, const at::Tensor& readout,
                           const RolloutOptions& options);

// Area mapping between grids: P (coarse.tokens(), fine.tokens()), row-stochastic,
// P[i, j] = area(cell_i ∩ cell_j) / area(cell_i) with both grids spanning the same image;
// prefix tokens map to the prefix token of the same name (or are dropped when `fine` has
// none of that name). Identity when the layouts are equal.
at::Tensor area_map(const attention::TokenLayout& coarse, const attention::TokenLayout& fine);

}  // namespace attnlab::analysis
