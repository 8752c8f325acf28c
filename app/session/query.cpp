// Query resolution; see query.h.
#include "app/session/query.h"

#include <ATen/ATen.h>

#include <stdexcept>

#include "app/session/analysis_session.h"
#include "core/analysis/result_key.h"

namespace attnlab::session {

int64_t Query::token_in(const attention::TokenLayout& layout) const {
  if (prefix.empty()) return analysis::token_for(grid, layout);
  for (int64_t i = 0; i < layout.num_prefix(); ++i)
    if (layout.prefix[size_t(i)] == prefix) return i;
  return -1;
}

Query resolve_query(const AnalysisSettings& s, const attention::TokenLayout& first) {
  Query q;
  q.grid.ref_h = first.height;
  q.grid.ref_w = first.width;
  if (s.query_token >= 0) {
    if (s.query_token >= first.tokens())
      throw std::invalid_argument(
          "query token " + std::to_string(s.query_token) + " does not exist: the first layer has " +
          std::to_string(first.tokens()) + " tokens (" + first.describe() + ")");
    if (first.is_prefix(s.query_token)) {
      q.prefix = first.prefix[size_t(s.query_token)];
      q.tag = q.prefix;
      return q;
    }
    const int64_t g = s.query_token - first.num_prefix();
    q.grid.y = g / first.width;
    q.grid.x = g % first.width;
  } else {
    q.grid.y = s.query_y < 0 ? first.height / 2 : s.query_y;
    q.grid.x = s.query_y < 0 ? first.width / 2 : s.query_x;
  }
  if (q.grid.y >= q.grid.ref_h || q.grid.x < 0 || q.grid.x >= q.grid.ref_w)
    throw std::invalid_argument("query (" + std::to_string(q.grid.y) + ", " +
                                std::to_string(q.grid.x) + ") lies outside the first layer's " +
                                std::to_string(first.height) + "x" + std::to_string(first.width) +
                                " grid");
  q.tag = analysis::grid_query_tag(q.grid.y, q.grid.x);
  return q;
}

LayerQueryMaps layer_query_maps(const attention::AttentionTrace& trace, int64_t b, int64_t token) {
  LayerQueryMaps out{analysis::query_map(trace, b, token), {}};
  out.fused = at::stack({analysis::fuse_heads(out.map.grid, analysis::HeadFusion::Mean),
                         analysis::fuse_heads(out.map.grid, analysis::HeadFusion::Max),
                         analysis::fuse_heads(out.map.grid, analysis::HeadFusion::Min)});
  return out;
}

QueryRollout rollout_of_query(const std::vector<const attention::AttentionTrace*>& chain,
                              int64_t b, const AnalysisSettings& settings) {
  QueryRollout out;
  out.query = rollout_query(settings, chain.front()->layout, chain.back()->layout);
  const int64_t token = out.query.token_in(chain.back()->layout);
  if (token < 0)
    throw attention::TraceQueryError("the last layer has no " + out.query.prefix + " token");
  out.result = analysis::rollout_query(chain, b, token, rollout_options(settings.options));
  const attention::TokenLayout& l = out.result.layout;
  out.grid = out.result.weights.slice(0, l.num_prefix()).reshape({l.height, l.width});
  return out;
}

Query rollout_query(const AnalysisSettings& s, const attention::TokenLayout& first,
                    const attention::TokenLayout& last) {
  const bool asked = s.query_token >= 0 || s.query_y >= 0;
  if (!asked && !last.prefix.empty() && last.prefix.front() == "cls") {
    Query q;
    q.prefix = q.tag = "cls";
    return q;
  }
  return resolve_query(s, first);
}

std::string describe_rollout(const analysis::RolloutOptions& o) {
  return analysis::head_fusion_name(o.fusion) + std::string(" head fusion, residual ") +
         std::to_string(o.residual).substr(0, 4) + ", discard ratio " +
         std::to_string(o.discard_ratio).substr(0, 4) +
         (o.renormalize ? ", rows renormalised" : ", rows not renormalised");
}

}  // namespace attnlab::session
