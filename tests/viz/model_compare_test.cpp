// The compare figure's scales (viz/figures/model_compare.h) on synthetic maps whose ranges
// are known: the per-panel default gives each map its own colorbar (diverging when
// signed) and names its range in the header; the shared scale tops out at the stated
// percentile of |w| over all maps and says how many cells it clips; the difference panel
// is A − B on a symmetric scale, or a note when the grids differ.
#include <gtest/gtest.h>

#include <cmath>

#include "viz/figures/model_compare.h"

namespace attnlab::viz {
namespace {

analysis::Array grid(int rows, int cols, float base, float step) {
  analysis::Array a;
  a.name = "map";
  a.shape = {rows, cols};
  a.axes = {"y", "x"};
  for (int i = 0; i < rows * cols; ++i) a.data.push_back(base + step * float(i));
  return a;
}

RgbaImage picture() {
  RgbaImage p;
  p.width = p.height = 28;
  p.rgba.assign(size_t(28 * 28 * 4), 128);
  return p;
}

TEST(CompareFigure, PerPanelScalesByDefault) {
  const RgbaImage pic = picture();
  // A flat map (0.005 ± 0.0001) next to a peaked one and a signed one.
  const analysis::Array flat = grid(7, 7, 0.005f, 2e-6f), peaked = grid(7, 7, 0.0f, 0.01f);
  analysis::Array signed_map = grid(7, 7, -0.1f, 0.005f);
  const CaptionedFigure f =
      model_compare_figure(pic, {{"flat", &flat}, {"peaked", &peaked}, {"signed", &signed_map}},
                           MapQuery{}, "test");
  ASSERT_EQ(f.figure.panels.size(), 4u);  // input + 3
  EXPECT_FALSE(f.figure.colorbar.has_value());
  for (size_t i = 1; i < 4; ++i) ASSERT_TRUE(f.figure.panels[i].colorbar.has_value());
  // Each panel's colorbar spans its own map (topped at the 98th percentile of |w|).
  const ColorbarSpec& c_flat = *f.figure.panels[1].colorbar;
  EXPECT_NEAR(c_flat.vmin, 0.005, 1e-7);
  EXPECT_GT(c_flat.vmax, 0.005 + 40 * 2e-6);
  EXPECT_LE(c_flat.vmax, 0.005 + 48 * 2e-6 + 1e-9);
  const ColorbarSpec& c_signed = *f.figure.panels[3].colorbar;
  EXPECT_DOUBLE_EQ(c_signed.vmin, -c_signed.vmax);  // symmetric about 0
  EXPECT_EQ(c_signed.cmap, signed_colormap(Colormap::Viridis));
  EXPECT_EQ(f.figure.panels[1].title, "flat\n[0.005, 0.0051]");  // the map's own range
  EXPECT_NE(f.caption.find("each map on its own colour scale"), std::string::npos);
}

TEST(CompareFigure, SharedScaleClipsAtThePercentileAndSaysSo) {
  const RgbaImage pic = picture();
  analysis::Array a = grid(10, 10, 0.0f, 0.001f);  // 0 .. 0.099
  const analysis::Array b = grid(10, 10, 0.0f, 0.0005f);
  a.data[0] = 10.0f;  // one large cell (a query's weight on itself)
  CompareOptions o;
  o.scale = CompareScale::Shared;
  const CaptionedFigure f =
      model_compare_figure(pic, {{"a", &a}, {"b", &b}}, MapQuery{}, "test", {}, o);
  ASSERT_TRUE(f.figure.colorbar.has_value());
  // 200 cells: the 98th percentile (nearest rank: the 196th smallest |w|) excludes the
  // large cell and the three next largest, so the scale is set by the maps, not the outlier.
  EXPECT_NEAR(f.figure.colorbar->vmax, 0.096, 1e-6);
  EXPECT_NE(f.caption.find("4 cells beyond it"), std::string::npos) << f.caption;
  for (size_t i = 1; i < f.figure.panels.size(); ++i)
    EXPECT_FALSE(f.figure.panels[i].colorbar.has_value());
}

TEST(CompareFigure, ClippedRangeIsSymmetricForSignedData) {
  const std::vector<float> v = {-0.2f, 0.1f, 0.05f, 0.0f};
  size_t clipped = 0;
  const ValueRange r = clipped_range({{v.data(), v.size()}}, 100, &clipped);
  EXPECT_NEAR(r.lo, -0.2, 1e-7);
  EXPECT_NEAR(r.hi, 0.2, 1e-7);
  EXPECT_EQ(clipped, 0u);
}

TEST(CompareFigure, DifferenceOfAnyTwoOrANoteWhenGridsDiffer) {
  const RgbaImage pic = picture();
  const analysis::Array a = grid(7, 7, 0.0f, 0.01f), b = grid(7, 7, 0.1f, 0.0f),
                        c = grid(14, 14, 0.0f, 0.001f);
  CompareOptions o;
  o.difference = std::make_pair(0, 1);
  const CaptionedFigure f =
      model_compare_figure(pic, {{"a", &a}, {"b", &b}, {"c", &c}}, MapQuery{}, "test", {}, o);
  ASSERT_EQ(f.figure.panels.size(), 5u);  // input, a, b, c, a − b
  const Panel& d = f.figure.panels.back();
  EXPECT_EQ(d.title.substr(0, d.title.find('\n')), "a − b");
  ASSERT_TRUE(d.colorbar.has_value());
  EXPECT_DOUBLE_EQ(d.colorbar->vmin, -d.colorbar->vmax);
  o.difference = std::make_pair(2, 0);
  const CaptionedFigure g =
      model_compare_figure(pic, {{"a", &a}, {"b", &b}, {"c", &c}}, MapQuery{}, "test", {}, o);
  EXPECT_FALSE(g.figure.panels.back().image);  // a note, not a map
  EXPECT_NE(g.caption.find("different token grids"), std::string::npos);
  o.difference = std::make_pair(0, 3);
  EXPECT_THROW(model_compare_figure(pic, {{"a", &a}, {"b", &b}}, MapQuery{}, "test", {}, o),
               std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::viz
