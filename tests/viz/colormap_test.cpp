// Colormaps: endpoints match the published maps, NaN is distinct, infinities and
// out-of-range values clamp, a degenerate range maps to the middle, names round-trip.
// (viz has no LibTorch: this binary links attnlab_viz alone.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "viz/colormap.h"

namespace attnlab::viz {
namespace {

void expect_near(Rgba8 got, int r, int g, int b, int tol = 3) {
  EXPECT_LE(std::abs(int(got.r) - r), tol) << int(got.r) << " vs " << r;
  EXPECT_LE(std::abs(int(got.g) - g), tol) << int(got.g) << " vs " << g;
  EXPECT_LE(std::abs(int(got.b) - b), tol) << int(got.b) << " vs " << b;
  EXPECT_EQ(got.a, 255);
}

TEST(Colormap, EndpointsMatchPublishedMaps) {
  expect_near(colormap_at(Colormap::Viridis, 0.f), 68, 1, 84);     // #440154
  expect_near(colormap_at(Colormap::Viridis, 1.f), 253, 231, 37);  // #fde725
  expect_near(colormap_at(Colormap::Magma, 0.f), 0, 0, 4);         // #000004
  expect_near(colormap_at(Colormap::Magma, 1.f), 252, 253, 191);   // #fcfdbf
}

TEST(Colormap, SequentialMapsGetBrighter) {
  for (Colormap cm : {Colormap::Viridis, Colormap::Magma}) {
    int prev = -1;
    for (int i = 0; i <= 10; ++i) {
      Rgba8 c = colormap_at(cm, float(i) / 10.f);
      int luma = 299 * c.r + 587 * c.g + 114 * c.b;
      EXPECT_GT(luma, prev) << colormap_name(cm) << " at " << i;
      prev = luma;
    }
  }
}

TEST(Colormap, NanInfinityAndClamping) {
  const float inf = std::numeric_limits<float>::infinity();
  float v[5] = {std::nanf(""), -inf, inf, -5.f, 5.f};
  uint8_t out[20];
  apply_colormap(v, 5, 0.f, 1.f, Colormap::Viridis, out);
  EXPECT_EQ(out[3], kNanColor.a);
  EXPECT_EQ(out[0], kNanColor.r);
  Rgba8 lo = colormap_at(Colormap::Viridis, 0.f), hi = colormap_at(Colormap::Viridis, 1.f);
  for (int i : {1, 3}) EXPECT_EQ(out[4 * i], lo.r);
  for (int i : {2, 4}) EXPECT_EQ(out[4 * i + 1], hi.g);
}

TEST(Colormap, DegenerateRangeMapsToMiddle) {
  float v[2] = {0.f, 7.f};
  uint8_t out[8];
  apply_colormap(v, 2, 1.f, 1.f, Colormap::Magma, out);
  Rgba8 mid = colormap_at(Colormap::Magma, 0.5f);
  EXPECT_EQ(out[0], mid.r);
  EXPECT_EQ(out[4], mid.r);
}

TEST(Colormap, ImageAndNames) {
  float v[6] = {0, 1, 2, 3, 4, 5};
  RgbaImage img = colormap_image(v, 3, 2, 0.f, 5.f, Colormap::Coolwarm);
  EXPECT_EQ(img.width, 3);
  EXPECT_EQ(img.rgba.size(), 24u);
  for (Colormap cm : kAllColormaps) EXPECT_EQ(colormap_from_name(colormap_name(cm)), cm);
  EXPECT_FALSE(colormap_from_name("hot").has_value());
}

}  // namespace
}  // namespace attnlab::viz
