// Locality: mean attention distance per head (SPEC §3), Σ_j a_ij·‖pos_i − pos_j‖ in
// patches of the layer's grid, averaged over the grid queries. Prefix tokens have no
// position: they are not queries and their keys add no distance (their weight is not
// renormalised away — the SPEC's formula as written). Pooled keys (HiLo Lo-Fi) are spread
// onto the tokens they cover first. Rows are computed a chunk at a time: memory O(chunk·N).
#pragma once

#include <ATen/core/Tensor.h>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

// (heads,) float64 on CPU.
at::Tensor mean_attention_distance(const attention::AttentionTrace& trace, int64_t b,
                                   int64_t chunk_rows = 256);
// The distance of one row over the layer's tokens (length layout.tokens()) from grid token
// `query` — the per-query quantity the mean above averages.
double attention_distance(const at::Tensor& row_on_tokens, const attention::TokenLayout& layout,
                          int64_t query);

}  // namespace attnlab::analysis
