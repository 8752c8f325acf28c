// prompts's figures (see prompts.cpp for what it computes): its report figure and GUI tab,
// attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo): not part of a
// GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/prompts.h"

namespace attnlab::session {

void prompts_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"prompts", "Text prompts"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of("prompts", im.tag).empty()) continue;
        const ResultImage* image = &im;
        jobs.push_back({"prompts", "prompts__" + m.name + "__" + im.tag, [&m, image] {
                          return viz::prompt_figure(m.arrays, image->tag, image->picture,
                                                    m.class_names);
                        }});
      }
  };
  info.tab = AnalysisTab{"prompts",
                         "Prompts",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           const ResultImage& im = m.images.front();
                           return viz::prompt_figure(m.arrays, im.tag, im.picture, m.class_names);
                         },
                         "A whole CLIP given prompts (the model panel's text prompts, or "
                         "--text): where each prompt is in the image, its probability, and "
                         "Grad-CAM of its score."};
  info.tab->group = "explain";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
