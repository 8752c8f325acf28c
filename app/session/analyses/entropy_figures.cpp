// entropy's figures (see entropy.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/entropy.h"

namespace attnlab::session {

void entropy_figures(AnalysisInfo& info) {
  attach_per_head_table_figures(
      info, {"entropy",
             "Attention entropy per head",
             "Entropy",
             "tokens",
             {"entropy_layers", "normalised_entropy_mean", "row entropy / ln K",
              "Attention entropy H / ln K (mean over heads and queries)", ""},
             [](const std::vector<std::pair<std::string, analysis::Table>>& tables) {
               return viz::entropy_figure(tables);
             }});
}

}  // namespace attnlab::session
