// map_rank's figures (see map_rank.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/map_rank.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {

void map_rank_figures(AnalysisInfo& info) {
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(
        s, {"map_rank_layers", "rank_mean", "map rank",
            "Numerical rank of the attention map (mean over heads; max(N, K)·ε·σ_max rule)", ""});
  };
  info.figure_kinds = {{"map_rank", "Attention-map rank per head"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "map_rank_heads");
    if (!tables.empty())
      jobs.push_back({"map_rank", "map_rank", [tables] { return viz::map_rank_figure(tables); }});
  };
  info.tab = AnalysisTab{"map_rank",
                         "Map rank",
                         true,
                         false,
                         [](const TabInputs& in) {
                           return viz::map_rank_figure(model_tables(in.models, "map_rank_heads"));
                         },
                         ""};
  info.tab->group = "spectral";  // the GUI's row of tabs (app/gui/tab_table.cpp)
}

}  // namespace attnlab::session
