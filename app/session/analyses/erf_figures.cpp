// erf's figures (see erf.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <optional>
#include <stdexcept>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/erf.h"

namespace attnlab::session {
namespace {

// The figure's view of one model's results (nullopt when it has no erf arrays).
std::optional<viz::ErfModel> erf_model(const ModelResults& m) {
  const analysis::Array* map = m.array(kMapKey);
  const analysis::Array* setup = m.array(kSetupKey);
  if (!map || !setup || setup->data.size() < 4) return std::nullopt;
  viz::ErfModel e{m.name, *map, setup->data[0], setup->data[1], {}, {}};
  if (const analysis::Table* t = m.table("erf"))
    for (const auto& row : t->rows)
      e.radii.push_back({row[t->column("percent")].number(), row[t->column("radius_px")].number()});
  if (const analysis::Table* t = m.table("erf_profile"))
    for (const auto& row : t->rows) e.cumulative.push_back(row[t->column("cumulative")].number());
  return e;
}

}  // namespace

void erf_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"erf", "Effective receptive field"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    std::vector<viz::ErfModel> models;
    for (const auto& m : in.models)
      if (auto e = erf_model(m)) models.push_back(*e);
    if (!models.empty())
      jobs.push_back({"erf", "erf", [models] { return viz::erf_figure(models); }});
  };
  info.tab = AnalysisTab{"erf",
                         "ERF",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const auto e = erf_model(in.models.front());
                           if (!e) throw std::invalid_argument("no receptive field for this model");
                           return viz::erf_figure({*e});
                         },
                         "This image's receptive field; attnlab report averages an image set."};
  info.tab->group = "explain";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
