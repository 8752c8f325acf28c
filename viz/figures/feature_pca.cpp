// The feature PCA figure: picture, PCA colours and foreground per image.
#include "viz/figures/feature_pca.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "core/analysis/result_key.h"
#include "viz/figure_layout.h"
#include "viz/figures/map_panels.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

// The RGB array (h, w, 3) in [0, 1] as a picture of `scale` × `scale` pixels per token:
// blocks stay blocks in every viewer (a vector file's viewer would smooth an enlarged
// h × w image).
RgbaImage fpca_token_picture(const analysis::Array& rgb, int scale) {
  const int h = int(rgb.shape[0]), w = int(rgb.shape[1]);
  RgbaImage small;
  small.width = w;
  small.height = h;
  small.rgba.resize(size_t(w) * size_t(h) * 4);
  for (size_t i = 0; i < size_t(w) * size_t(h); ++i) {
    for (size_t c = 0; c < 3; ++c) {
      const float v = rgb.data[i * 3 + c];
      const double clamped = std::isfinite(v) ? std::clamp(double(v), 0.0, 1.0) : 0.0;
      small.rgba[i * 4 + c] = uint8_t(std::lround(clamped * 255.0));
    }
    small.rgba[i * 4 + 3] = 255;
  }
  return scale > 1 ? scale_image_nearest(small, scale) : small;
}

// The background tinted blue (coolwarm's low end at alpha 0.5 over its tokens: visible on
// black backgrounds as on white ones, where darkening would not be) and the border between
// foreground and background tokens outlined, over a panel whose data coordinates are the
// picture's pixels.
void fpca_add_foreground(Panel& p, const analysis::Array& fg, double width, double height) {
  const int h = int(fg.shape[0]), w = int(fg.shape[1]);
  auto on = [&](int y, int x) {
    return y >= 0 && y < h && x >= 0 && x < w && fg.data[size_t(y) * w + x] > 0.5f;
  };
  HeatmapLayer shade;
  shade.rows = h;
  shade.cols = w;
  shade.values.resize(size_t(h) * size_t(w));
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) shade.values[size_t(y) * w + x] = on(y, x) ? NAN : 0.0f;
  shade.cmap = Colormap::Coolwarm;  // 0: its blue end
  shade.upsample = Upsample::Nearest;
  shade.x1 = width;
  shade.y1 = height;
  shade.alpha = 0.5;
  p.items.emplace_back(std::move(shade));
  // One segment per cell edge with foreground on one side only (the picture's edge counts
  // as background), so the outline follows the tokens exactly.
  const double cw = width / w, ch = height / h;
  const Color gold = color_hex(0xffc20a);
  auto segment = [&](double x0, double y0, double x1, double y1) {
    LineSeries s;
    s.x = {x0, x1};
    s.y = {y0, y1};
    s.color = gold;
    s.width_pt = 0.9;
    p.items.emplace_back(std::move(s));
  };
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) {
      if (!on(y, x)) continue;
      if (!on(y - 1, x)) segment(x * cw, y * ch, (x + 1) * cw, y * ch);
      if (!on(y + 1, x)) segment(x * cw, (y + 1) * ch, (x + 1) * cw, (y + 1) * ch);
      if (!on(y, x - 1)) segment(x * cw, y * ch, x * cw, (y + 1) * ch);
      if (!on(y, x + 1)) segment((x + 1) * cw, y * ch, (x + 1) * cw, (y + 1) * ch);
    }
}

// The first row of the "feature_pca" table (the basis is the same on every row).
struct FpcaBasisFacts {
  double threshold = NAN, masked = NAN, flipped = NAN, fitted = NAN;
  double explained[3] = {NAN, NAN, NAN};
  std::string tokens;
};

FpcaBasisFacts fpca_basis_facts(const std::vector<analysis::Table>& tables,
                                const std::string& who) {
  FpcaBasisFacts f;
  const analysis::Table* t = find_table_or_null(tables, "feature_pca");
  if (!t || t->rows.empty()) return f;
  const Columns cols(*t, who);
  const auto& row = t->rows.front();
  f.threshold = cols.number(row, "threshold_mean");
  f.masked = cols.number(row, "masked_mean");
  f.flipped = cols.number(row, "flipped_mean");
  f.fitted = cols.number(row, "images_fitted_mean");
  for (int k = 0; k < 3; ++k)
    f.explained[k] = cols.number(row, "explained_pc" + std::to_string(k + 1) + "_mean");
  f.tokens = cols.text(row, "tokens");
  return f;
}

std::string fpca_percent(double share) {
  return std::isfinite(share) ? format_number(100.0 * share, 2) + "%" : std::string("?");
}

}  // namespace

CaptionedFigure feature_pca_figure(const std::vector<analysis::Array>& arrays,
                                   const std::vector<FeaturePcaRow>& images,
                                   const std::vector<analysis::Table>& tables,
                                   const std::string& model,
                                   const FeaturePcaFigureOptions& options) {
  const std::string who = "feature PCA figure";
  const FpcaBasisFacts facts = fpca_basis_facts(tables, who);
  const bool masked = !(facts.masked == 0.0);
  std::vector<Panel> panels;
  std::vector<std::string> shown;
  for (const FeaturePcaRow& row : images) {
    const analysis::Array* rgb = find_array_or_null(
        arrays, analysis::format_result_key({"feature_pca", row.tag, -1, "", "", "rgb"}));
    const analysis::Array* fg = find_array_or_null(
        arrays, analysis::format_result_key({"feature_pca", row.tag, -1, "", "", "foreground"}));
    if (!rgb || !fg || !row.picture || row.picture->empty()) continue;
    require_axes(*rgb, {"y", "x", "rgb"}, who);
    require_axes(*fg, {"y", "x"}, who);
    if (rgb->shape[2] != 3 || fg->shape[0] != rgb->shape[0] || fg->shape[1] != rgb->shape[1])
      throw std::invalid_argument(who + ": the rgb and foreground arrays of " + row.tag +
                                  " are not (y, x, 3) and (y, x) of one grid");
    const RgbaImage& pic = *row.picture;
    const int h = int(rgb->shape[0]), w = int(rgb->shape[1]);
    double share = 0;
    for (float v : fg->data) share += v > 0.5f;
    share /= double(fg->data.size());
    panels.push_back(input_panel(pic, h, w, std::nullopt, row.label.empty() ? row.tag : row.label));
    // Each token a block of the picture's patch size (at least one pixel), drawn over the
    // picture's extent so the three panels line up.
    Panel colours = image_panel(fpca_token_picture(*rgb, std::max(1, pic.width / w)),
                                "PCA as RGB (" + std::to_string(h) + "x" + std::to_string(w) + ")");
    auto& layer = std::get<ImageLayer>(colours.items.front());
    layer.x1 = colours.x.max = pic.width;
    layer.y1 = colours.y.max = pic.height;
    panels.push_back(std::move(colours));
    Panel fore = image_panel(pic, masked ? "foreground " + fpca_percent(share)
                                         : std::string("foreground: all (no mask)"));
    if (masked) fpca_add_foreground(fore, *fg, pic.width, pic.height);
    panels.push_back(std::move(fore));
    shown.push_back(row.tag);
  }
  if (panels.empty())
    throw std::invalid_argument(who +
                                ": no image has feature_pca__<image>__rgb and "
                                "__foreground arrays");
  Figure f;
  f.width_in = options.width_in;
  f.font_pt = options.font_pt;
  f.cols = shown.size() >= 4 ? 6 : 3;
  f.panels = std::move(panels);
  f.height_in = 40;
  f.height_in = fitted_height_in(f);

  const std::string source = facts.tokens == "out.norm" ? std::string("the final norm's output")
                             : facts.tokens.empty()     ? std::string("the model")
                                                        : "the block output " + facts.tokens;
  std::string caption =
      "Feature PCA (DINOv2, Oquab et al. 2023) of " + model + ": the grid tokens of " + source +
      " (prefix tokens left out), " +
      (facts.fitted == 1.0 ? std::string("fitted on this image alone")
                           : "one basis fitted on " +
                                 (std::isfinite(facts.fitted) ? format_number(facts.fitted)
                                                              : std::string("all the")) +
                                 " images together, so one colour is one feature in every image") +
      ". Per image: the picture the model saw; the first three principal components of the "
      "foreground tokens as red, green and "
      "blue, each min-max scaled, every token a block of pixels, the background black";
  if (std::isfinite(facts.explained[0]))
    caption += " (explained variance " + fpca_percent(facts.explained[0]) + ", " +
               fpca_percent(facts.explained[1]) + ", " + fpca_percent(facts.explained[2]) + ")";
  if (masked)
    caption +=
        "; the foreground, the tokens whose first component of a PCA of all tokens "
        "(min-max scaled, oriented so the picture's border scores low" +
        std::string(facts.flipped == 1.0 ? ", which flipped its sign" : "") + ") is above " +
        (std::isfinite(facts.threshold) ? format_number(facts.threshold) : "the threshold") +
        ", outlined, the rest tinted blue.";
  else
    caption += "; no foreground mask (--pca-no-mask): every token is coloured.";
  if (shown.size() < images.size())
    caption += " " + std::to_string(images.size() - shown.size()) +
               " image(s) without feature PCA arrays left out.";
  return {f, caption};
}

}  // namespace attnlab::viz
