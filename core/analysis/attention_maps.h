// Attention maps (SPEC §3): one query's implicit attention row per head, spread over the
// layer's token grid (HiLo's Lo-Fi rows over pooled keys share each key's weight among the
// s×s tokens it pooled, so every head's map sums to its row's mass on the same grid),
// prefix tokens (cls, dist) reported apart; head fusion; the CLS/dist rows; and the
// all-layers × all-heads overview for one query position, mapped between stage grids by
// area so hierarchical backbones work the same way.
#pragma once

#include <ATen/core/Tensor.h>

#include <string>
#include <vector>

#include "core/attention/attention_trace.h"

namespace attnlab::analysis {

enum class HeadFusion { Mean, Max, Min };
const char* head_fusion_name(HeadFusion f);  // "mean" | "max" | "min"
// Throws std::invalid_argument listing the accepted names.
HeadFusion parse_head_fusion(const std::string& name);

// A query position on a reference grid (ref_h × ref_w), usually the first attention
// layer's grid; token_for() maps it to any layer by area (the cell that contains the
// centre of the reference cell).
struct GridQuery {
  int64_t y = 0, x = 0;
  int64_t ref_h = 0, ref_w = 0;
};
// Token index in `layout` of the grid cell under q's centre.
int64_t token_for(const GridQuery& q, const attention::TokenLayout& layout);

struct QueryMap {
  attention::TokenLayout layout;  // the layer's
  int64_t query = 0;              // token index in that layout
  at::Tensor grid;                // (heads, H, W) float32 on CPU
  at::Tensor prefix;              // (heads, P) weights on the prefix tokens
};

// Every head's row for token `query` of image b.
QueryMap query_map(const attention::AttentionTrace& trace, int64_t b, int64_t query);
// The row of the named prefix token ("cls", "dist"); throws TraceQueryError when the
// layer has no such token (naming the ones it has).
QueryMap prefix_token_map(const attention::AttentionTrace& trace, int64_t b,
                          const std::string& prefix_name);
// Fuses the head axis (dim 0) of `per_head`: (heads, ...) -> (...).
at::Tensor fuse_heads(const at::Tensor& per_head, HeadFusion fusion);

// One query's maps in every layer given (forward order): layers × heads at once.
std::vector<QueryMap> query_overview(const std::vector<const attention::AttentionTrace*>& layers,
                                     int64_t b, const GridQuery& q);

}  // namespace attnlab::analysis
