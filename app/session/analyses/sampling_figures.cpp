// sampling's figures (see sampling.cpp for what it computes): its report figure and GUI tab,
// attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo): not part of a
// GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/sampling.h"

namespace attnlab::session {

void sampling_figures(AnalysisInfo& info) {
  attach_query_view_figures(
      info,
      {"sampling", "DAT's deformable sampling", "Sampling",
       "The query clicked in the Maps tab: where each key was sampled (reference point to "
       "dot) and the query's weight on each sample.",
       [](const std::vector<analysis::Array>& arrays, const std::string& tag,
          const viz::RgbaImage& picture, int64_t layer, const std::optional<viz::MapQuery>& query) {
         viz::SamplingFigureOptions o;
         o.layer = layer;
         o.query = query;
         return viz::sampling_figure(arrays, tag, picture, o);
       }});
}

}  // namespace attnlab::session
