// cka's figures (see cka.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <stdexcept>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/cka.h"

namespace attnlab::session {

void cka_figures(AnalysisInfo& info) {
  info.series_figure = [](const SeriesResults& s) {
    return series_statistic(s, {"cka_final", "cka", "CKA to the final checkpoint",
                                "Linear CKA of each layer with the same layer of the final "
                                "checkpoint",
                                ""});
  };
  info.figure_kinds = {{"cka", "Linear CKA between layers"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    std::vector<viz::CkaModel> models;
    for (const auto& m : in.models) {
      const analysis::Array* h = m.array(kHsicKey);
      const analysis::Array* l = m.array(kLayersKey);
      if (h && l) models.push_back({m.name, *h, *l});
    }
    if (!models.empty())
      jobs.push_back({"cka", "cka", [models] { return viz::cka_figure(models); }});
  };
  info.tab = AnalysisTab{"cka",
                         "CKA",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           const analysis::Array* h = m.array(kHsicKey);
                           const analysis::Array* l = m.array(kLayersKey);
                           if (!h || !l) throw std::invalid_argument("no CKA for this model");
                           return viz::cka_figure({{m.name, *h, *l}});
                         },
                         "CKA of this image's tokens; attnlab report averages an image set."};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
