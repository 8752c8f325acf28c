// merges's figures (see merges.cpp for what it computes): its report figure and GUI tab,
// attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo): not part of a
// GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/merges.h"

namespace attnlab::session {

void merges_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"merges", "Token merging"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of("merges", im.tag).empty()) continue;
        const ResultImage* image = &im;
        jobs.push_back({"merges", "merges__" + m.name + "__" + im.tag, [&m, image] {
                          return viz::merge_figure(m.arrays, image->tag, image->picture);
                        }});
      }
  };
  info.tab = AnalysisTab{"merges",
                         "Merges",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           const ResultImage& im = m.images.front();
                           return viz::merge_figure(m.arrays, im.tag, im.picture);
                         },
                         "Each merged token's patches in their mean colour, block by block; "
                         "Maps and Rollout show the merged attention carried back to the "
                         "patches."};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
