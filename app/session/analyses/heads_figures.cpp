// heads's figures (see heads.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <stdexcept>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/head_importance.h"

namespace attnlab::session {

void heads_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"head_importance", "Head importance by ablation"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    auto tables = model_tables(in.models, "head_importance");
    if (!tables.empty())
      jobs.push_back({"head_importance", "head_importance",
                      [tables] { return viz::head_importance_figure(tables); }});
  };
  info.tab = AnalysisTab{
      "heads",
      "Heads",
      false,
      false,
      [](const TabInputs& in) {
        const ModelResults& m = in.models.front();
        const analysis::Table* t = m.table("head_importance");
        if (!t)
          throw std::invalid_argument(
              "the GUI ablates the heads of models with at most " + std::to_string(kGuiHeadTokens) +
              " head-tokens (heads x tokens); for this model run attnlab head-importance or "
              "report --analyses heads");
        return viz::head_importance_figure({{m.name, *t}});
      },
      "Each head switched off alone on this image; attnlab head-importance adds the loss and "
      "accuracy on a labelled set."};
  info.tab->group = "explain";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
