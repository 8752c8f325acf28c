// outliers's figures (see outliers.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/outliers.h"
#include "viz/figures/series_statistic.h"

namespace attnlab::session {

void outliers_figures(AnalysisInfo& info) {
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(
        s, {"outliers_layers", "max_over_median_mean", "max norm / median",
            "The largest token norm of the block output over the median norm", ""});
  };
  info.figure_kinds = {{"outliers", "Outlier tokens: norms and the attention they receive"},
                       {"outlier_positions", "Outlier tokens over the picture"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "outliers_layers");
    if (!tables.empty())
      jobs.push_back({"outliers", "outliers", [tables] { return viz::outliers_figure(tables); }});
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of("outliers", im.tag).empty()) continue;
        const ResultImage* image = &im;
        jobs.push_back(
            {"outlier_positions", "outlier_positions__" + m.name + "__" + im.tag, [&m, image] {
               return viz::outlier_positions_figure(m.arrays, image->tag, image->picture, m.tables);
             }});
      }
  };
  info.tab =
      AnalysisTab{"outliers",
                  "Outliers",
                  false,
                  false,
                  [](const TabInputs& in) {
                    const ModelResults& m = in.models.front();
                    const ResultImage& im = m.images.front();
                    return viz::outlier_positions_figure(m.arrays, im.tag, im.picture, m.tables);
                  },
                  "Bright cells: tokens whose norm is far above the layer's median. "
                  "attnlab report's outliers figure compares the models."};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
