// routing's figures (see routing.cpp for what it computes): its report figure and GUI tab,
// attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo): not part of a
// GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/routing.h"

namespace attnlab::session {

void routing_figures(AnalysisInfo& info) {
  attach_query_view_figures(
      info,
      {"routing", "BiFormer's routed regions", "Routing",
       "The query clicked in the Maps tab: its region (red) and the regions its queries "
       "attend to, in routing order.",
       [](const std::vector<analysis::Array>& arrays, const std::string& tag,
          const viz::RgbaImage& picture, int64_t layer, const std::optional<viz::MapQuery>& query) {
         viz::RoutingFigureOptions o;
         o.layer = layer;
         o.query = query;
         return viz::routing_figure(arrays, tag, picture, o);
       }});
}

}  // namespace attnlab::session
