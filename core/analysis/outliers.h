// Outlier tokens (issue 26; Darcet et al., "Vision Transformers Need Registers", 2024): a
// few tokens whose norm in the residual stream is far above the rest and which soak up
// attention. Per traced layer, from the output of the block around it (the residual
// stream after that block, as the backbone records it under "out.<block path>"):
//   norms         ‖x_j‖₂ of every token j (prefix tokens included), float64
//   outliers      tokens with ‖x_j‖ > factor · median_j ‖x_j‖ (default 10×, the paper's
//                 observation of norms an order of magnitude above the rest)
//   received      the attention each token receives in this layer: per head (Aᵀ·1)_j / N,
//                 the mean over every query of its weight on key j, spread onto the layer's
//                 tokens (pooled keys share equally); through AttentionTrace::
//                 apply_transposed, so O(N·d) for factored mechanisms, never N×N
//   outlier_mass  mean over heads of Σ_{j ∈ outliers} received_j: for rows that sum to 1,
//                 the share of all attention landing on the outliers; compare with
//                 outlier_share = |outliers| / N, what uniform attention would give them
//   prefix_mass   the same over the prefix tokens (cls, dist, registers)
//   register_mass the same over the register tokens alone (DINOv2 _reg: "reg0", ...), 0
//                 without them; with grid_outliers (the outliers among the grid's tokens)
//                 it reproduces the paper's observation: registers take over the high
//                 norms and the attention that outlier patches hold in a model without
// Same layer for both: the outlier positions persist from layer to layer in the paper's
// models, and the block's output is what the layout's tokens are after this attention.
#pragma once

#include <ATen/core/Tensor.h>

#include <vector>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

struct LayerOutliers {
  at::Tensor norms;  // (N,) float64, layout order
  double median = 0.0, max = 0.0;
  double threshold = 0.0;         // factor · median
  std::vector<int64_t> outliers;  // token indices above the threshold, ascending
  at::Tensor received;            // (heads, N) float64
  double outlier_mass = 0.0, prefix_mass = 0.0, outlier_share = 0.0;
  double register_mass = 0.0;
  int64_t grid_outliers = 0;  // outliers that are grid tokens (not cls, dist, registers)
};

// Per head the attention each token of image b receives, (Aᵀ·1)_j / N: (heads, N) float64
// on the CPU. Throws attention::TraceQueryError for an image outside the batch.
at::Tensor received_attention(const attention::AttentionTrace& trace, int64_t b);

// Throws std::invalid_argument for factor <= 0, tokens that are not (N, C) with the
// trace's N, or non-finite norms; attention::TraceQueryError for an image outside the batch.
LayerOutliers outlier_tokens(const at::Tensor& tokens, const attention::AttentionTrace& trace,
                             int64_t b, double factor = 10.0);

}  // namespace attnlab::analysis
