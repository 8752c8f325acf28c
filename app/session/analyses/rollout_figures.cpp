// rollout's figures (see rollout.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <utility>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/rollout.h"

namespace attnlab::session {
namespace {

// The first layer's grid, from the model's query maps (a rollout of a prefix token does
// not say where a grid query would sit).
std::pair<int, int> first_grid(const ModelResults& m, const std::string& image) {
  const analysis::Array* first = nullptr;
  int64_t layer = -1;
  for (const auto& [key, a] : m.arrays_of("maps", image))
    if (key.part == "heads" && (layer < 0 || key.layer < layer) && a->shape.size() == 3) {
      first = a;
      layer = key.layer;
    }
  return first ? std::make_pair(int(first->shape[1]), int(first->shape[2])) : std::make_pair(0, 0);
}

}  // namespace

void rollout_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"rollout", "Attention rollout"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    const FigureOptions& o = in.options;
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        const auto [ref_rows, ref_cols] = first_grid(m, im.tag);
        for (const auto& [key, a] : m.arrays_of("rollout", im.tag)) {
          const viz::MapQuery q = figure_query(key.query, ref_rows, ref_cols);
          const analysis::Array* map = a;
          const viz::RgbaImage* picture = &im.picture;
          const ModelResults* model = &m;
          jobs.push_back({"rollout", "rollout__" + m.name + "__" + im.tag, [=] {
                            return viz::rollout_figure(*picture, *map, q, model->name,
                                                       o.rollout_switches, o.style);
                          }});
        }
      }
  };
}

}  // namespace attnlab::session
