// The models side by side on a photo: under the default scale every model's map must be
// readable. The six original zoo mechanisms (softmax, linear, Castling, HiLo, RALA,
// AnchorFormer) analyse assets/photos/chelsea.png as `attnlab report` does, the report's
// "compare" figure is built and rendered, and inside each model panel the pixel spread
// must reach a stated minimum. On one shared max-scaled range most of these maps were flat
// (Castling's signed ±0.43 against softmax's and linear's much smaller weights), which is
// what this guards against.
//
// The measure: the figure is drawn with the map fully opaque (alpha 1), so a panel's
// pixels are the colormap's; its spread is the largest over R, G, B of the 98th minus the
// 2nd percentile of the channel inside the panel's plot area. viridis spans 30..253 in G
// from end to end: a map using most of the scale spreads well over 100; a flattened one
// (all cells within a few percent of the scale) stays under 20. The minimum, 64, is a
// quarter of the channel range. Percentiles, not min/max, so the query's red outline and
// the grid lines do not count as contrast.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <vector>

#include "app/cli/report_run.h"
#include "app/session/analysis_registry.h"
#include "app/session/model_source.h"
#include "tests/support/temp_path.h"
#include "viz/figure_layout.h"
#include "viz/render.h"

namespace attnlab::cli {
namespace {

constexpr double kDpi = 100;
constexpr int kMinSpread = 64;

int spread(const viz::RgbaImage& img, const viz::Rect& plot_pt) {
  const int x0 = int(plot_pt.x * kDpi / 72) + 2, x1 = int((plot_pt.x + plot_pt.w) * kDpi / 72) - 2;
  const int y0 = int(plot_pt.y * kDpi / 72) + 2, y1 = int((plot_pt.y + plot_pt.h) * kDpi / 72) - 2;
  int best = 0;
  for (int c = 0; c < 3; ++c) {
    std::vector<int> v;
    for (int y = std::max(0, y0); y < std::min(img.height, y1); ++y)
      for (int x = std::max(0, x0); x < std::min(img.width, x1); ++x)
        v.push_back(img.rgba[size_t(4 * (y * img.width + x) + c)]);
    if (v.size() < 100) return 0;
    std::sort(v.begin(), v.end());
    best = std::max(best, v[v.size() * 98 / 100] - v[v.size() * 2 / 100]);
  }
  return best;
}

TEST(CompareView, EveryModelIsReadableOnAPhotoUnderTheDefaultScale) {
  const std::string root = ATTNLAB_SOURCE_DIR;
  const std::vector<ImageInput> images = {{root + "/assets/photos/chelsea.png", "chelsea"}};
  session::AnalysisSettings settings;
  settings.analyses = {"maps"};
  testing::TempDir dir("compare_contrast");
  std::vector<ModelResults> models;
  for (const char* name : {"softmax", "linear", "castling", "hilo", "rala", "anchor"}) {
    const auto choice =
        session::model_entry_choice(root + "/models/zoo/" + std::string(name) + ".safetensors");
    models.push_back(run_report_model(choice, images, settings, runtime::ComputeTarget{},
                                      dir.file(name), nlohmann::json::object()));
  }
  session::FigureOptions options;  // the defaults, as `attnlab report` and the GUI have them
  options.style.overlay.alpha = 1.0;
  const std::optional<session::SeriesResults> no_series;
  std::vector<session::FigureJob> jobs;
  session::find_analysis("maps")->report_figures(session::ReportInputs{models, no_series, options},
                                                 jobs);
  const auto job = std::find_if(jobs.begin(), jobs.end(),
                                [](const session::FigureJob& j) { return j.kind == "compare"; });
  ASSERT_NE(job, jobs.end());
  const viz::CaptionedFigure fig = job->build();
  ASSERT_EQ(fig.figure.panels.size(), models.size() + 1);  // the input, then one per model
  const viz::RgbaImage img = viz::render_rgba(fig.figure, kDpi);
  const viz::FigureLayout layout = viz::layout_figure(fig.figure);
  for (size_t k = 0; k < models.size(); ++k) {
    const int s = spread(img, layout.panels[k + 1].plot);
    std::printf("compare contrast: %s spreads %d levels (minimum %d)\n", models[k].name.c_str(), s,
                kMinSpread);
    EXPECT_GE(s, kMinSpread) << models[k].name << ": " << fig.figure.panels[k + 1].title;
  }
  // The same maps on the shared scale still draw, and the caption says where it clips.
  options.compare_scale = viz::CompareScale::Shared;
  jobs.clear();
  session::find_analysis("maps")->report_figures(session::ReportInputs{models, no_series, options},
                                                 jobs);
  for (const auto& j : jobs)
    if (j.kind == "compare") {
      const auto shared = j.build();
      EXPECT_NE(shared.caption.find("th percentile of |w| over all maps"), std::string::npos)
          << shared.caption;
    }
}

}  // namespace
}  // namespace attnlab::cli
