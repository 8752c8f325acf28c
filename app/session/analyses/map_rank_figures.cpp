// map_rank's figures (see map_rank.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/map_rank.h"

namespace attnlab::session {

void map_rank_figures(AnalysisInfo& info) {
  attach_per_head_table_figures(
      info, {"map_rank",
             "Attention-map rank per head",
             "Map rank",
             "spectral",
             {"map_rank_layers", "rank_mean", "map rank",
              "Numerical rank of the attention map (mean over heads; max(N, K)·ε·σ_max rule)", ""},
             [](const std::vector<std::pair<std::string, analysis::Table>>& tables) {
               return viz::map_rank_figure(tables);
             }});
}

}  // namespace attnlab::session
