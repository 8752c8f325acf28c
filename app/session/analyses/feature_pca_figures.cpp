// feature_pca's figures (see feature_pca.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <algorithm>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/feature_pca.h"

namespace attnlab::session {
namespace {

// The images of a model that have feature PCA arrays, split into figures of at most
// viz::kFeaturePcaImagesPerFigure rows.
void add_feature_pca_figures(const ModelResults& m, std::vector<FigureJob>& jobs) {
  std::vector<const ResultImage*> shown;
  for (const auto& im : m.images)
    if (m.array({"feature_pca", im.tag, -1, "", "", "rgb"})) shown.push_back(&im);
  const size_t per = size_t(viz::kFeaturePcaImagesPerFigure);
  for (size_t first = 0; first < shown.size(); first += per) {
    std::vector<const ResultImage*> part(shown.begin() + long(first),
                                         shown.begin() + long(std::min(shown.size(), first + per)));
    const std::string stem = "feature_pca__" + m.name +
                             (first == 0 ? std::string() : "__" + std::to_string(first / per + 1));
    jobs.push_back({"feature_pca", stem, [&m, part] {
                      std::vector<viz::FeaturePcaRow> images;
                      for (const ResultImage* im : part) images.push_back({im->tag, &im->picture});
                      return viz::feature_pca_figure(m.arrays, images, m.tables, m.name);
                    }});
  }
}

}  // namespace

void feature_pca_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"feature_pca", "Feature PCA: tokens' principal components as RGB"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models) add_feature_pca_figures(m, jobs);
  };
  info.tab = AnalysisTab{"feature_pca",
                         "Feature PCA",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           const ResultImage& im = m.images.front();
                           return viz::feature_pca_figure(
                               m.arrays, {{im.tag, &im.picture, "input"}}, m.tables, m.name);
                         },
                         "Fitted on this image alone; attnlab report fits on all images "
                         "together (one colour per feature across them)."};
  info.tab->group = "features";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
