// The query of the maps and the rollout: a prefix token by name ("cls", followed by name
// through the layers), or a cell of the first layer's grid, mapped to each other grid by
// area (analysis::token_for). Shared by the maps and rollout analyses and by the GUI's
// click path, which answers a click from the traces with the same resolution.
#pragma once

#include <string>

#include <vector>

#include "core/analysis/attention_maps.h"
#include "core/analysis/rollout.h"
#include "core/attention/token_layout.h"

namespace attnlab::session {

struct AnalysisSettings;

struct Query {
  std::string prefix;  // non-empty: the prefix token of this name
  analysis::GridQuery grid;
  std::string tag;  // "cls", "q7-3"
  // This query's token in `layout`, or -1 when the layout has no such prefix token.
  int64_t token_in(const attention::TokenLayout& layout) const;
};

// The settings' query (query_token, or query_y/x, or the grid's centre) on the first
// layer's layout; throws std::invalid_argument for a token or cell that does not exist.
Query resolve_query(const AnalysisSettings& settings, const attention::TokenLayout& first);

// The rollout's query: the cls token when the last layer has one and the settings ask for
// no query, else the settings' query.
Query rollout_query(const AnalysisSettings& settings, const attention::TokenLayout& first,
                    const attention::TokenLayout& last);

// One layer's maps of a query token in image b of the traced batch: the query map (per head on the layer's grid, and the
// weights on prefix tokens) and its head fusions (3, H, W: mean, max, min). What the maps
// analysis writes and what the GUI shows for a click.
struct LayerQueryMaps {
  analysis::QueryMap map;
  at::Tensor fused;
};
LayerQueryMaps layer_query_maps(const attention::AttentionTrace& trace, int64_t b, int64_t token);

// The rollout of the settings' rollout query through `chain` (first layer first) for
// image b of the traced batch, and
// its weights on the first layer's grid (H, W). Throws attention::TraceQueryError when
// the last layer has no such prefix token. What the rollout analysis writes and what the
// GUI shows.
struct QueryRollout {
  Query query;
  analysis::RolloutResult result;
  at::Tensor grid;
};
QueryRollout rollout_of_query(const std::vector<const attention::AttentionTrace*>& chain,
                              int64_t b, const AnalysisSettings& settings);

// The rollout's switches as captions state them: "mean head fusion, residual 0.50, discard
// ratio 0.00, rows renormalised" (the report's and the GUI's rollout figures).
std::string describe_rollout(const analysis::RolloutOptions& options);

}  // namespace attnlab::session
