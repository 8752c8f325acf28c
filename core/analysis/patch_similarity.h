// Patch similarity (issue 48, item 2): how alike the clicked token and every other token
// are at one layer, by the cosine of their features — the block's output tokens (the
// residual stream after the block), or the attention's queries, keys or values where the
// mechanism keeps one per token (the figure of DINO-style "patch matching" and of
// ViT-Prisma's patch similarity, across attention mechanisms).
#pragma once

#include <ATen/core/Tensor.h>

#include <string>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

enum class SimilarityFacet { Tokens, Queries, Keys, Values };
const char* similarity_facet_name(SimilarityFacet f);  // "tokens", "queries", "keys", "values"
// Throws std::invalid_argument naming the choices.
SimilarityFacet parse_similarity_facet(const std::string& name);

// The queries, keys or values of image b, one row per layout token (prefix first), every
// head's features side by side: (N, heads·d) float64 on the CPU. Only where each head
// group keeps one key per token (no pooled or windowed key space: HiLo's Lo-Fi keys, SRA's
// reduced keys, Swin's windows do not) and one query per token; otherwise a
// attention::TraceQueryError saying why. Tokens is not a trace facet: std::invalid_argument.
at::Tensor trace_facet(const attention::AttentionTrace& trace, int64_t b, SimilarityFacet facet);

// Cosine similarity of row `query` of features (N, C) with every row: (N,) float64. A row
// of zero norm has similarity 0 with everything (no direction to compare). Throws
// std::invalid_argument for a query out of range, non-2-D or non-finite features.
at::Tensor cosine_similarity_row(const at::Tensor& features, int64_t query);

}  // namespace attnlab::analysis
