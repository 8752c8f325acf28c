// segmentation's figures (see segmentation.cpp for what it computes): its report figures, series
// figure and GUI tab, attached to the analysis by analysis_figures.cpp. Drawn by viz (cairo):
// not part of a GPU-check-only build (ATTNLAB_GPU_CHECK_ONLY), whose session has no figures.
#include <limits>
#include <optional>
#include <stdexcept>

#include "app/session/analyses/step_figures.h"

#include "viz/figures/segmentation.h"

namespace attnlab::session {
namespace {

// The figure of one image: its masks and Jaccard values (the last analysed layer's).
std::optional<viz::CaptionedFigure> segmentation_image_figure(const ModelResults& m,
                                                              const ResultImage& im) {
  double tau = std::numeric_limits<double>::quiet_NaN();  // as the table states it
  for (const auto& t : m.tables)
    if (t.name == "segmentation" && !t.rows.empty()) tau = t.rows.front().at(t.column("tau")).r;
  const analysis::Array* masks = nullptr;
  const analysis::Array* jaccard = nullptr;
  analysis::ResultKey key;
  for (const auto& [k, a] : m.arrays_of("segmentation", im.tag)) {
    if (k.part == "masks") masks = a, key = k;
    if (k.part == "jaccard") jaccard = a;
  }
  if (!masks || !jaccard) return std::nullopt;
  const std::vector<double> j(jaccard->data.begin(), jaccard->data.end());
  return viz::segmentation_figure(im.picture, *masks, j, m.name, layer_label(key.layer),
                                  key.query == "cls" ? "the cls row" : "the mean query row", tau);
}

}  // namespace

void segmentation_figures(AnalysisInfo& info) {
  info.figure_kinds = {{"segmentation", "Attention segmentation (DINO)"}};
  info.report_figures = [](const ReportInputs& in, std::vector<FigureJob>& jobs) {
    for (const auto& m : in.models)
      for (const auto& im : m.images) {
        if (m.arrays_of("segmentation", im.tag).empty()) continue;
        const ModelResults* model = &m;
        const ResultImage* image = &im;
        jobs.push_back({"segmentation", "segmentation__" + m.name + "__" + im.tag, [=] {
                          auto f = segmentation_image_figure(*model, *image);
                          if (!f)
                            throw std::runtime_error("segmentation: no masks for " + image->tag);
                          return *f;
                        }});
      }
  };
  info.tab = AnalysisTab{"segmentation",
                         "Segmentation",
                         false,
                         false,
                         [](const TabInputs& in) {
                           const ModelResults& m = in.models.front();
                           auto f = segmentation_image_figure(m, m.images.front());
                           if (!f) throw std::runtime_error("no attention masks for this image");
                           return *f;
                         },
                         "Bright tokens: the fewest holding the share tau of the readout "
                         "row's attention (SETTINGS: seg-mass, seg-truth for a Jaccard score)."};
  info.tab->group = "tokens";  // the GUI's row of tabs (app/gui/views/tab_table.cpp)
}

}  // namespace attnlab::session
