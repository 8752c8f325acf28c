// locality's figures (see locality.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/locality.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {

void locality_figures(AnalysisInfo& info) {
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(
        s, {"locality_layers", "mean_distance_mean", "mean attention distance (patches)",
            "Mean attention distance (mean over heads)", ""});
  };
  info.figure_kinds = {{"locality", "Mean attention distance per head"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "locality_heads");
    if (!tables.empty())
      jobs.push_back({"locality", "locality", [tables] { return viz::locality_figure(tables); }});
  };
  info.tab = AnalysisTab{"locality",
                         "Locality",
                         true,
                         false,
                         [](const TabInputs& in) {
                           return viz::locality_figure(model_tables(in.models, "locality_heads"));
                         },
                         ""};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/tab_table.cpp)
}

}  // namespace attnlab::session
