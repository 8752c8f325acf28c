// locality's figures (see locality.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/locality.h"

namespace attnlab::session {

void locality_figures(AnalysisInfo& info) {
  attach_per_head_table_figures(
      info, {"locality",
             "Mean attention distance per head",
             "Locality",
             "tokens",
             {"locality_layers", "mean_distance_mean", "mean attention distance (patches)",
              "Mean attention distance (mean over heads)", ""},
             [](const std::vector<std::pair<std::string, analysis::Table>>& tables) {
               return viz::locality_figure(tables);
             }});
}

}  // namespace attnlab::session
