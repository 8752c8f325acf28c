// agents's figures (see agents.cpp for what it computes): its report figure and GUI tab,
// attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo): not part of a
// GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/agents.h"

namespace attnlab::session {

void agents_figures(AnalysisInfo& info) {
  attach_query_view_figures(
      info,
      {"agents", "Agent attention's agents", "Agents",
       "The query clicked in the Maps tab: its weights over the agents, and where its "
       "strongest agents look.",
       [](const std::vector<analysis::Array>& arrays, const std::string& tag,
          const viz::RgbaImage& picture, int64_t layer, const std::optional<viz::MapQuery>& query) {
         viz::AgentFigureOptions o;
         o.layer = layer;
         o.query = query;
         return viz::agent_figure(arrays, tag, picture, o);
       }});
}

}  // namespace attnlab::session
