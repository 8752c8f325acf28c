// rank's figures (see rank.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/rank.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {

void rank_figures(AnalysisInfo& info) {
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(
        s,
        {"rank_layers", "rank_mean", "numerical rank",
         "Numerical rank of each matrix kind (KV buffer, output, ...; mean over heads)", "matrix"});
  };
  info.figure_kinds = {{"rank", "Rank of the KV buffer and of the output"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      if (m.table("rank_layers"))
        jobs.push_back(
            {"rank", "rank__" + m.name, [&m] { return viz::rank_figure(m.tables, m.arrays); }});
  };
  info.tab = AnalysisTab{"rank",
                         "Rank",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           return viz::rank_figure(m.tables, m.arrays);
                         },
                         ""};
  info.tab->group = "spectral";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
