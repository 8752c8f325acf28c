// Gradient-weighted attention rollout: a class-specific rollout. Per layer, each head's
// attention A_h (its explicit (N, K) rows, TraceOptions::explicit_attention) is weighted by
// the class score's gradient with respect to it, Â = fuse_h(max(A_h ⊙ ∂s/∂A_h, 0)) spread
// onto the layer's tokens, and the Â are rolled out as rollout.h does (residual weight,
// discard ratio, renormalisation; across hierarchical stages by area). The map is what
// the classifier reads of R: the prefix tokens' rows (cls, and dist for distilled models,
// averaged) or, for models that pool all tokens, the mean of all rows; prefix columns are
// left out, so the map lies on the first layer's image grid.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/analysis/rollout.h"
#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

// One traced layer and, per head, ∂score/∂explicit_rows[h] (same shape, (B, N, K)).
struct GradientLayer {
  const attention::AttentionTrace* trace = nullptr;
  std::vector<at::Tensor> gradients;
};

// Â of one layer for image b: (N, N) float64 on CPU.
at::Tensor gradient_weighted_map(const GradientLayer& layer, int64_t b, HeadFusion fusion);

struct GradRolloutResult {
  attention::TokenLayout layout;  // the first layer's
  at::Tensor map;                 // (height, width) float32: the readout over the grid
  std::string readout;            // which rows of R were read, in words
  RolloutOptions options;
};

// Throws std::invalid_argument for missing explicit rows or gradients of the wrong shape,
// TraceQueryError above options.max_tokens (from rollout_readout).
GradRolloutResult gradient_rollout(const std::vector<GradientLayer>& layers, int64_t b,
                                   const RolloutOptions& options = {});

}  // namespace attnlab::analysis
