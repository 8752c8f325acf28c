// gradrollout's figures (see gradrollout.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/explanation_figure.h"
#include "app/session/analyses/step_figures.h"

namespace attnlab::session {

void gradrollout_figures(AnalysisInfo& info) {
  info.figure_kinds = {explanations_figure_kind()};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    add_explanation_grid(in, "gradrollout", "Gradient-weighted attention rollout", jobs);
  };
}

}  // namespace attnlab::session
