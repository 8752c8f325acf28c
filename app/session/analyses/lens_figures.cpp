// lens's figures (see lens.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/lens.h"

namespace attnlab::session {

void lens_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"lens", "Logit lens: KL to the final prediction and top-1 agreement"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "lens");
    if (!tables.empty())
      jobs.push_back({"lens", "lens", [tables] { return viz::lens_figure(tables); }});
  };
  info.tab = AnalysisTab{
      "lens",
      "Logit lens",
      true,
      false,
      [](const TabInputs& in) { return viz::lens_figure(model_tables(in.models, "lens")); },
      "This image: each block read out through the model's own head. "
      "attnlab report averages an image set; attnlab probe trains linear "
      "probes on the same readouts."};
  info.tab->group = "explain";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
