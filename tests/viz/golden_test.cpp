// Golden images: a few fixed figures rendered at 100 dpi and compared with PNGs stored in
// tests/viz/golden/ by a pixel metric (mean absolute difference and the share of pixels
// that differ strongly), not by hash, so that an anti-aliasing change in cairo or FreeType
// passes while a moved label, a lost panel or a wrong colour fails.
// Regenerate after an intended change with ATTNLAB_UPDATE_GOLDEN=1 and look at the PNGs.
//
// What keeps them machine-independent: the image size comes from the figure's size in
// inches at a fixed dpi, never from text extents; the font is pinned (DejaVu Sans, from
// fonts-dejavu-core, which scripts/setup.sh installs); and the metric absorbs what other
// cairo/pixman/FreeType builds change (anti-aliased edges, ±1 levels from SIMD blending).
// scripts/test_portability.sh renders them with pixman's SIMD paths turned off
// (PIXMAN_DISABLE) as well as on; each run prints its two numbers for comparison.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>

#include "tests/viz/figure_test_util.h"
#include "tests/viz/sample_figures.h"
#include "viz/figures/rollout.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

constexpr double kDpi = 100;
constexpr double kMaxMeanAbs = 1.5;       // levels of 255, over all channels
constexpr double kMaxShareLarge = 0.003;  // pixels with a channel off by more than 64

Figure golden_rollout_figure() {
  analysis::Array a;
  a.name = "rollout__synthetic__q3-4";
  a.shape = {7, 9};  // a non-square grid
  a.axes = {"y", "x"};
  for (int r = 0; r < 7; ++r)
    for (int c = 0; c < 9; ++c)
      a.data.push_back(float(1.0 / (1 + (r - 3) * (r - 3) + (c - 4) * (c - 4))));
  RgbaImage img;
  img.width = 36;
  img.height = 28;
  img.rgba.assign(size_t(36 * 28 * 4), 255);
  for (int y = 0; y < 28; ++y)
    for (int x = 0; x < 36; ++x) img.rgba[size_t(y * 36 + x) * 4 + 1] = uint8_t(7 * x);
  MapQuery q;
  q.label = "query (3, 4)";
  q.cell = GridCell{3, 4};
  q.ref_rows = 7;
  q.ref_cols = 9;
  return rollout_figure(img, a, q, "synthetic", "mean head fusion, residual 0.5").figure;
}

void check_golden(const std::string& name, const Figure& f) {
  const std::string path = std::string(ATTNLAB_SOURCE_DIR) + "/tests/viz/golden/" + name + ".png";
  if (std::getenv("ATTNLAB_UPDATE_GOLDEN")) {
    write_figure(f, path, FigureFormat::Png, kDpi);
    GTEST_SKIP() << "wrote " << path;
  }
  const RgbaImage expected = testing::read_png(path);
  ASSERT_FALSE(expected.empty()) << "missing golden image " << path;
  const RgbaImage got = render_rgba(f, kDpi);
  ASSERT_EQ(got.width, expected.width);
  ASSERT_EQ(got.height, expected.height);
  const testing::PixelDifference d = testing::compare_images(got, expected);
  std::cout << "golden " << name << ": mean |difference| " << d.mean_abs
            << " levels, share of pixels off by > 64: " << d.share_large << "\n";
  EXPECT_LE(d.mean_abs, kMaxMeanAbs) << name;
  EXPECT_LE(d.share_large, kMaxShareLarge) << name;
}

TEST(GoldenImages, PlotFigure) {
  check_golden("sample_plot", testing::sample_plot_figure());
}
TEST(GoldenImages, MapFigure) {
  check_golden("sample_map", testing::sample_map_figure());
}
TEST(GoldenImages, RolloutFigure) {
  check_golden("rollout", golden_rollout_figure());
}

// The metric itself: identical images pass, a shifted or recoloured picture does not.
TEST(GoldenImages, MetricSeesRealDifferences) {
  const RgbaImage a = render_rgba(testing::sample_plot_figure(), kDpi);
  EXPECT_EQ(testing::compare_images(a, a).mean_abs, 0.0);
  Figure moved = testing::sample_plot_figure();
  moved.panels[0].title = "a different title";
  std::get<LineSeries>(moved.panels[0].items[0]).y[1] = 50;
  const testing::PixelDifference d = testing::compare_images(a, render_rgba(moved, kDpi));
  EXPECT_TRUE(d.mean_abs > kMaxMeanAbs || d.share_large > kMaxShareLarge)
      << d.mean_abs << " " << d.share_large;
}

}  // namespace
}  // namespace attnlab::viz
