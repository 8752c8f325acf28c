// The query of the maps and the rollout: a prefix token by name ("cls", followed by name
// through the layers), or a cell of the first layer's grid, mapped to each other grid by
// area (analysis::token_for). Shared by the maps and rollout analyses and by the GUI's
// click path, which answers a click from the traces with the same resolution.
#pragma once

#include <string>

#include "core/analysis/attention_maps.h"
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

}  // namespace attnlab::session
