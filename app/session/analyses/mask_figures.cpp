// mask's figures (see mask.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include "app/session/analyses/step_figures.h"

#include "viz/figures/castling_mask.h"

namespace attnlab::session {

void mask_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"castling_mask", "Castling auxiliary-mask sparsity over training"}};
  info.series_figure = [](const SeriesResults& s) { return viz::castling_mask_figure(s.tables); };
  info.tab = AnalysisTab{"mask", "Castling mask", false, true, nullptr, ""};
  info.tab->group = "training";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
