// See segmentation.h.
#include "viz/figures/segmentation.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

#include "viz/figure_layout.h"
#include "viz/figures/map_panels.h"

namespace attnlab::viz {
namespace {

std::string jaccard_text(double j) {
  if (std::isnan(j)) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, ", J %.2f", j);
  return buf;
}

}  // namespace

CaptionedFigure segmentation_figure(const RgbaImage& picture, const analysis::Array& masks,
                                    const std::vector<double>& jaccard, const std::string& model,
                                    const std::string& layer, const std::string& source,
                                    double tau) {
  const int64_t n = map_count(masks);
  if (n < 2 || int64_t(jaccard.size()) != n)
    throw std::invalid_argument("segmentation_figure: " + masks.name + " holds " +
                                std::to_string(n) + " masks for " + std::to_string(jaccard.size()) +
                                " Jaccard values");
  // The kept tokens in the colormap's top colour over a greyscale picture; nearest
  // upsampling, so each kept token is a whole patch as DINO's masks are.
  MapStyle style;
  style.overlay.cmap = Colormap::Inferno;
  style.overlay.upsample = Upsample::Nearest;
  style.overlay.alpha = 0.55;
  const MapSlice first = map_slice(masks, 0);
  Figure f;
  f.font_pt = 7;
  f.panels.push_back(input_panel(picture, first.rows, first.cols, std::nullopt));
  const auto background = map_background(picture, style);
  for (int64_t k = 0; k < n; ++k) {
    const std::string who = k + 1 == n ? "mean of heads" : "head " + std::to_string(k);
    f.panels.push_back(overlay_panel(background, map_slice(masks, k), ValueRange{0, 1}, style,
                                     std::nullopt, who + jaccard_text(jaccard[size_t(k)])));
  }
  const int panels = int(f.panels.size());
  f.cols = std::clamp(panels, 1, 7);
  f.width_in = f.cols <= 4 ? kColumnWidthIn * f.cols / 4.0 + 0.2 : kPageWidthIn;
  f.width_in = std::min(kPageWidthIn, std::max(kColumnWidthIn, f.width_in));
  char share[16];
  std::snprintf(share, sizeof share, "%g", tau * 100);
  f.title = model + " \u2014 " + layer + ", " + source + ", " + share + "% of the mass";
  f.height_in = 2.0 * f.rows() + 0.6;
  f.height_in = fitted_height_in(f);
  CaptionedFigure out{std::move(f), ""};
  out.caption = "Attention segmentation (DINO): per head of " + layer + " of " + model +
                ", the fewest tokens holding " + share + "% of " + source +
                "'s attention (bright), and the same for the mean of the heads, over the " +
                std::to_string(first.rows) + "\u00d7" + std::to_string(first.cols) + " token grid" +
                (std::isnan(jaccard.back()) ? "."
                                            : "; J: Jaccard index of the mask, upsampled by the "
                                              "patch, with the ground-truth foreground.");
  return out;
}

}  // namespace attnlab::viz
