// How sharply each head attends in one image, for the dataset-level head statistics (issue
// 70 goal 5: the images and patches where a head attends most sharply or most broadly, as
// dictionary-feature browsers show "top-activating" examples). Per head: the normalised
// entropy H / ln K of every query row (core/analysis/entropy.h's row_entropy: rows of the
// mechanism's own implicit attention, a chunk at a time), their mean over the queries (the
// image's score for the head), and the grid query whose row is sharpest (lowest entropy;
// prefix tokens are not patches and are left out of that choice; the lowest index wins a
// tie).
#pragma once

#include <ATen/core/Tensor.h>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

struct HeadSharpness {
  at::Tensor mean;            // (heads,) float64: mean over queries of H / ln K
  at::Tensor sharpest_query;  // (heads,) int64: grid index (y·W + x) of the sharpest row
  at::Tensor sharpest_value;  // (heads,) float64: that row's H / ln K
};

// Image b of the trace. Heads with one key (K = 1) score 0. Throws
// attention::TraceQueryError for an image outside the batch and std::invalid_argument for a
// layout without grid tokens.
HeadSharpness head_sharpness(const attention::AttentionTrace& trace, int64_t b,
                             int64_t chunk_rows = 256);

}  // namespace attnlab::analysis
