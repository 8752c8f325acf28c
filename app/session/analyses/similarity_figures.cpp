// similarity's figures (see similarity.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <optional>
#include <stdexcept>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/similarity.h"

namespace attnlab::session {
namespace {

// Every layer's map of one image (for the query and facet it was computed for).
std::optional<viz::CaptionedFigure> similarity_image_figure(const ModelResults& m,
                                                            const ResultImage& im) {
  std::vector<viz::SimilarityLayer> layers;
  std::string query, facet;
  for (const auto& [key, a] : m.arrays_of("similarity", im.tag)) {
    layers.push_back({layer_label(key.layer), a});
    query = key.query;
    facet = key.part;
  }
  if (layers.empty()) return std::nullopt;
  const auto& first = layers.front().map->shape;
  const viz::MapQuery q = figure_query(query, int(first[0]), int(first[1]));
  return viz::similarity_figure(im.picture, layers, q, m.name, facet);
}

}  // namespace

void similarity_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"similarity", "Patch similarity of the query"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of("similarity", im.tag).empty()) continue;
        const ModelResults* model = &m;
        const ResultImage* image = &im;
        jobs.push_back({"similarity", "similarity__" + m.name + "__" + im.tag, [=] {
                          auto f = similarity_image_figure(*model, *image);
                          if (!f) throw std::runtime_error("similarity: no maps for " + image->tag);
                          return *f;
                        }});
      }
  };
  info.tab = AnalysisTab{"similarity",
                         "Similarity",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           auto f = similarity_image_figure(m, m.images.front());
                           if (!f) throw std::runtime_error("no similarity maps for this image");
                           return *f;
                         },
                         "Red: tokens alike the query (the grid's centre); SETTINGS: the facet "
                         "compared."};
  info.tab->group = "features";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
