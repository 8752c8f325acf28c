// anchors's figures (see anchors.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/anchors.h"

namespace attnlab::session {

void anchors_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"anchors", "Anchor assignments"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of("anchors", im.tag).empty()) continue;
        const ResultImage* image = &im;
        jobs.push_back({"anchors", "anchors__" + m.name + "__" + im.tag, [&m, image] {
                          return viz::anchor_figure(m.arrays, image->tag, image->picture, m.tables);
                        }});
      }
  };
  info.tab = AnalysisTab{"anchors",
                         "Anchors",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           const ResultImage& im = m.images.front();
                           return viz::anchor_figure(m.arrays, im.tag, im.picture, m.tables);
                         },
                         "Hover a token in the Maps tab to see its soft assignment over the "
                         "anchors."};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
