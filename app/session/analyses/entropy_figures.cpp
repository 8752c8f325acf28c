// entropy's figures (see entropy.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/entropy.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {

void entropy_figures(AnalysisInfo& info) {
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(s, {"entropy_layers", "normalised_entropy_mean", "row entropy / ln K",
                                "Attention entropy H / ln K (mean over heads and queries)", ""});
  };
  info.figure_kinds = {{"entropy", "Attention entropy per head"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "entropy_heads");
    if (!tables.empty())
      jobs.push_back({"entropy", "entropy", [tables] { return viz::entropy_figure(tables); }});
  };
  info.tab = AnalysisTab{"entropy",
                         "Entropy",
                         true,
                         false,
                         [](const TabInputs& in) {
                           return viz::entropy_figure(model_tables(in.models, "entropy_heads"));
                         },
                         ""};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/tab_table.cpp)
}

}  // namespace attnlab::session
