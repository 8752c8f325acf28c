// Colormaps: the colours are matplotlib's, byte for byte (checked against values printed
// by matplotlib itself, not read from viz/colormap_tables.inc); the lookup picks entries
// as matplotlib does at the bin edges, below 0, above 1 and at infinities; NaN is distinct;
// a degenerate range maps to the middle; names round-trip; the sequential maps get lighter
// and the diverging ones are symmetric in lightness about a light middle.
// (viz has no LibTorch: this binary links attnlab_viz alone.)
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <vector>

#include "viz/colormap.h"

namespace attnlab::viz {
namespace {

struct Rgb {
  int r, g, b;
};

::testing::AssertionResult same_colour(Rgba8 got, Rgb want) {
  if (got.r == want.r && got.g == want.g && got.b == want.b && got.a == 255) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure()
         << "got (" << int(got.r) << ", " << int(got.g) << ", " << int(got.b) << ", " << int(got.a)
         << "), want (" << want.r << ", " << want.g << ", " << want.b << ", 255)";
}

bool operator==(Rgba8 a, Rgba8 b) {
  return a.r == b.r && a.g == b.g && a.b == b.b && a.a == b.a;
}

Rgba8 pixel(const uint8_t* rgba, int i) {
  return {rgba[4 * i], rgba[4 * i + 1], rgba[4 * i + 2], rgba[4 * i + 3]};
}

// Relative luminance Y of an sRGB colour (IEC 61966-2-1 linearisation, Rec. 709 weights).
double luminance(Rgba8 c) {
  auto lin = [](uint8_t v) {
    const double s = v / 255.0;
    return s <= 0.04045 ? s / 12.92 : std::pow((s + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

// Ground truth, printed by matplotlib 3.6.3 (Debian python3-matplotlib) with
//   /usr/bin/python3 -c "import matplotlib as m; [print(n, [tuple(int(v) for v in
//     m.colormaps[n](x, bytes=True)) for x in (0.0, 0.5, 1.0)]) for n in ('viridis',
//     'magma', 'inferno', 'plasma', 'cividis', 'turbo', 'jet', 'gray', 'RdBu', 'coolwarm')]"
// (every alpha printed was 255).
struct Expected {
  Colormap cm;
  Rgb at0, at_half, at1;
};
const Expected kMatplotlib[] = {
    {Colormap::Viridis, {68, 1, 84}, {32, 144, 140}, {253, 231, 36}},
    {Colormap::Magma, {0, 0, 3}, {182, 54, 121}, {251, 252, 191}},
    {Colormap::Inferno, {0, 0, 3}, {187, 55, 84}, {252, 254, 164}},
    {Colormap::Plasma, {12, 7, 134}, {203, 71, 119}, {239, 248, 33}},
    {Colormap::Cividis, {0, 34, 77}, {124, 123, 120}, {253, 231, 55}},
    {Colormap::Turbo, {48, 18, 59}, {164, 252, 59}, {122, 4, 2}},
    {Colormap::Jet, {0, 0, 127}, {124, 255, 121}, {127, 0, 0}},
    {Colormap::Gray, {0, 0, 0}, {128, 128, 128}, {255, 255, 255}},
    {Colormap::RdBu, {103, 0, 31}, {246, 246, 246}, {5, 48, 97}},
    {Colormap::Coolwarm, {58, 76, 192}, {221, 220, 219}, {179, 3, 38}},
};

TEST(Colormap, EqualsMatplotlibAtZeroHalfAndOne) {
  ASSERT_EQ(std::size(kMatplotlib), std::size(kAllColormaps));
  for (const Expected& e : kMatplotlib) {
    SCOPED_TRACE(colormap_name(e.cm));
    EXPECT_TRUE(same_colour(colormap_at(e.cm, 0.0f), e.at0));
    EXPECT_TRUE(same_colour(colormap_at(e.cm, 0.5f), e.at_half));
    EXPECT_TRUE(same_colour(colormap_at(e.cm, 1.0f), e.at1));
  }
}

// Where matplotlib's float lookup changes entry, on jet (whose neighbouring entries differ).
// Ground truth, matplotlib 3.6.3, float32 input like ours:
//   /usr/bin/python3 -c "import matplotlib as m, numpy as np; f = np.float32; print(m.colormaps[
//     'jet'](np.array([np.nextafter(f(1), f(0)), f(255/256), np.nextafter(f(255/256), f(0)),
//     np.nextafter(f(0.5), f(0)), f(1/256), np.nextafter(f(1/256), f(0)), f(-1e-30), f(-0.5),
//     f(1.5), f(1e30), f(np.inf), f(-np.inf)], dtype=f), bytes=True))"
// (the rows below, in order; every alpha printed was 255).
TEST(Colormap, LookupEdgesEqualMatplotlib) {
  const float inf = std::numeric_limits<float>::infinity();
  const auto below = [](float x) { return std::nextafter(x, 0.0f); };
  const struct {
    float x;
    Rgb want;
  } cases[] = {
      {below(1.0f), {127, 0, 0}},             // just below 1: the last entry
      {255.0f / 256.0f, {127, 0, 0}},         // the last entry starts here
      {below(255.0f / 256.0f), {132, 0, 0}},  // ... and the one before ends just below
      {below(0.5f), {121, 255, 125}},         // entry 127 (0.5 itself is entry 128)
      {1.0f / 256.0f, {0, 0, 132}},           // entry 1
      {below(1.0f / 256.0f), {0, 0, 127}},    // entry 0
      {-1e-30f, {0, 0, 127}},                 // under: the first entry
      {-0.5f, {0, 0, 127}},
      {1.5f, {127, 0, 0}},  // over: the last entry
      {1e30f, {127, 0, 0}},
      {inf, {127, 0, 0}},
      {-inf, {0, 0, 127}},
  };
  for (const auto& c : cases) {
    EXPECT_TRUE(same_colour(colormap_at(Colormap::Jet, c.x), c.want)) << "x = " << c.x;
  }
}

TEST(Colormap, OutOfRangeNanAndEntries) {
  const float inf = std::numeric_limits<float>::infinity();
  for (Colormap cm : kAllColormaps) {
    SCOPED_TRACE(colormap_name(cm));
    const Rgba8 first = colormap_entry(cm, 0), last = colormap_entry(cm, kColormapSize - 1);
    EXPECT_TRUE(colormap_at(cm, 0.0f) == first);
    EXPECT_TRUE(colormap_at(cm, -0.0f) == first);
    EXPECT_TRUE(colormap_at(cm, -1e-30f) == first);
    EXPECT_TRUE(colormap_at(cm, -3.0f) == first);
    EXPECT_TRUE(colormap_at(cm, -inf) == first);
    EXPECT_TRUE(colormap_at(cm, 1.0f) == last);
    EXPECT_TRUE(colormap_at(cm, std::nextafter(1.0f, 0.0f)) == last);
    EXPECT_TRUE(colormap_at(cm, 1.0001f) == last);
    EXPECT_TRUE(colormap_at(cm, inf) == last);
    EXPECT_TRUE(colormap_at(cm, std::nanf("")) == kNanColor);
    EXPECT_TRUE(colormap_at(cm, -std::numeric_limits<float>::quiet_NaN()) == kNanColor);
    // Entry i covers [i/256, (i+1)/256); indices outside the table clamp.
    for (int i = 0; i < kColormapSize; ++i) {
      const Rgba8 e = colormap_entry(cm, i);
      EXPECT_EQ(e.a, 255);
      EXPECT_TRUE(colormap_at(cm, float(i) / 256.0f) == e) << i;
      EXPECT_TRUE(colormap_at(cm, (float(i) + 0.5f) / 256.0f) == e) << i;
    }
    EXPECT_TRUE(colormap_entry(cm, -5) == first);
    EXPECT_TRUE(colormap_entry(cm, kColormapSize) == last);
  }
}

TEST(Colormap, ApplyMatchesColormapAtAndClamps) {
  const float inf = std::numeric_limits<float>::infinity();
  for (Colormap cm : kAllColormaps) {
    SCOPED_TRACE(colormap_name(cm));
    // On [0, 1] apply_colormap is colormap_at, value for value.
    std::vector<float> v;
    for (int i = 0; i <= 1024; ++i) v.push_back(float(i) / 1024.0f);
    std::vector<uint8_t> out(v.size() * 4);
    apply_colormap(v.data(), int(v.size()), 0.0f, 1.0f, cm, out.data());
    for (size_t i = 0; i < v.size(); ++i) {
      EXPECT_TRUE(pixel(out.data(), int(i)) == colormap_at(cm, v[i])) << v[i];
    }
    // Another range: [-2, 2] puts 0 at 0.5 and -1 at 0.25; outside clamps; NaN stays NaN.
    const float w[8] = {-2.f, 0.f, -1.f, 2.f, -7.f, 9.f, -inf, inf};
    uint8_t px[32];
    apply_colormap(w, 8, -2.f, 2.f, cm, px);
    EXPECT_TRUE(pixel(px, 0) == colormap_at(cm, 0.0f));
    EXPECT_TRUE(pixel(px, 1) == colormap_at(cm, 0.5f));
    EXPECT_TRUE(pixel(px, 2) == colormap_at(cm, 0.25f));
    EXPECT_TRUE(pixel(px, 3) == colormap_at(cm, 1.0f));
    EXPECT_TRUE(pixel(px, 4) == colormap_at(cm, 0.0f));
    EXPECT_TRUE(pixel(px, 5) == colormap_at(cm, 1.0f));
    EXPECT_TRUE(pixel(px, 6) == colormap_at(cm, 0.0f));
    EXPECT_TRUE(pixel(px, 7) == colormap_at(cm, 1.0f));
    const float nan = std::nanf("");
    apply_colormap(&nan, 1, -2.f, 2.f, cm, px);
    EXPECT_TRUE(pixel(px, 0) == kNanColor);
  }
  // A range too wide for float arithmetic still maps its ends to the ends.
  const float big = std::numeric_limits<float>::max();
  const float ends[3] = {-big, 0.f, big};
  uint8_t px[12];
  apply_colormap(ends, 3, -big, big, Colormap::Gray, px);
  EXPECT_TRUE(pixel(px, 0) == colormap_at(Colormap::Gray, 0.0f));
  EXPECT_TRUE(pixel(px, 1) == colormap_at(Colormap::Gray, 0.5f));
  EXPECT_TRUE(pixel(px, 2) == colormap_at(Colormap::Gray, 1.0f));
}

TEST(Colormap, DegenerateRangeMapsToMiddle) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::nanf("");
  const float ranges[][2] = {{1.f, 1.f}, {2.f, 1.f}, {-inf, 1.f}, {0.f, inf},
                             {nan, 1.f}, {0.f, nan}, {inf, inf}};
  const float v[4] = {0.f, 7.f, -inf, nan};
  for (Colormap cm : kAllColormaps) {
    const Rgba8 mid = colormap_at(cm, 0.5f);
    for (const auto& r : ranges) {
      uint8_t out[16];
      apply_colormap(v, 4, r[0], r[1], cm, out);
      for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(pixel(out, i) == mid)
            << colormap_name(cm) << " [" << r[0] << ", " << r[1] << "] value " << v[i];
      }
      EXPECT_TRUE(pixel(out, 3) == kNanColor);
    }
  }
}

TEST(Colormap, SequentialMapsGetLighter) {
  for (Colormap cm : {Colormap::Viridis, Colormap::Magma, Colormap::Inferno, Colormap::Plasma,
                      Colormap::Cividis, Colormap::Gray}) {
    SCOPED_TRACE(colormap_name(cm));
    EXPECT_FALSE(colormap_is_diverging(cm));
    // Strictly lighter every 8 entries; between neighbours the 8-bit rounding may give back
    // a hair (at most 0.0002 in Y, on viridis) but never more.
    double prev = -1.0;
    for (int i = 0; i < kColormapSize; i += 8) {
      const double y = luminance(colormap_entry(cm, i));
      EXPECT_GT(y, prev) << "entry " << i;
      prev = y;
    }
    EXPECT_GT(luminance(colormap_entry(cm, kColormapSize - 1)), prev);
    for (int i = 1; i < kColormapSize; ++i) {
      EXPECT_GT(luminance(colormap_entry(cm, i)), luminance(colormap_entry(cm, i - 1)) - 1e-3)
          << "entry " << i;
    }
  }
}

TEST(Colormap, DivergingMapsAreSymmetricAboutALightMiddle) {
  for (Colormap cm : {Colormap::RdBu, Colormap::Coolwarm}) {
    SCOPED_TRACE(colormap_name(cm));
    EXPECT_TRUE(colormap_is_diverging(cm));
    // Entry i and its mirror 255 - i are equally light (RdBu within 0.04 in Y, coolwarm
    // within 0.005), and lightness rises from both ends towards the middle.
    const double tol = cm == Colormap::RdBu ? 0.04 : 0.005;
    for (int i = 0; i < kColormapSize / 2; ++i) {
      const double lo = luminance(colormap_entry(cm, i));
      const double hi = luminance(colormap_entry(cm, kColormapSize - 1 - i));
      EXPECT_NEAR(lo, hi, tol) << "entries " << i << " and " << kColormapSize - 1 - i;
    }
    double prev_lo = -1.0, prev_hi = -1.0;
    for (int i = 0; i < kColormapSize / 2; i += 8) {
      const double lo = luminance(colormap_entry(cm, i));
      const double hi = luminance(colormap_entry(cm, kColormapSize - 1 - i));
      EXPECT_GT(lo, prev_lo) << "entry " << i;
      EXPECT_GT(hi, prev_hi) << "entry " << kColormapSize - 1 - i;
      prev_lo = lo;
      prev_hi = hi;
    }
    EXPECT_LT(luminance(colormap_at(cm, 0.0f)), 0.15);
    EXPECT_LT(luminance(colormap_at(cm, 1.0f)), 0.15);
    EXPECT_GT(luminance(colormap_at(cm, 0.5f)), 0.7);
  }
  for (Colormap cm : {Colormap::Turbo, Colormap::Jet}) EXPECT_FALSE(colormap_is_diverging(cm));
}

TEST(Colormap, Image) {
  float v[6] = {0, 1, 2, 3, 4, 5};
  RgbaImage img = colormap_image(v, 3, 2, 0.f, 5.f, Colormap::Coolwarm);
  EXPECT_EQ(img.width, 3);
  EXPECT_EQ(img.height, 2);
  ASSERT_EQ(img.rgba.size(), 24u);
  EXPECT_TRUE(pixel(img.rgba.data(), 0) == colormap_at(Colormap::Coolwarm, 0.0f));
  EXPECT_TRUE(pixel(img.rgba.data(), 5) == colormap_at(Colormap::Coolwarm, 1.0f));
  EXPECT_TRUE(colormap_image(v, 0, 2, 0.f, 5.f, Colormap::Coolwarm).rgba.empty());
}

TEST(Colormap, Names) {
  const char* const names[] = {"viridis", "magma", "inferno", "plasma", "cividis",
                               "turbo",   "jet",   "gray",    "RdBu",   "coolwarm"};
  ASSERT_EQ(std::size(names), std::size(kAllColormaps));
  for (size_t i = 0; i < std::size(names); ++i) {
    EXPECT_STREQ(colormap_name(kAllColormaps[i]), names[i]);
    EXPECT_EQ(colormap_from_name(names[i]), kAllColormaps[i]);
  }
  EXPECT_EQ(colormap_from_name("rdbu"), Colormap::RdBu);
  EXPECT_EQ(colormap_from_name("RDBU"), Colormap::RdBu);
  EXPECT_EQ(colormap_from_name("Viridis"), Colormap::Viridis);
  EXPECT_EQ(colormap_from_name("GRAY"), Colormap::Gray);
  EXPECT_EQ(colormap_from_name("CoolWarm"), Colormap::Coolwarm);
  for (const char* bad : {"", "grey", "rdbu_r", "viridis ", "RdB", "hot"}) {
    EXPECT_FALSE(colormap_from_name(bad).has_value()) << '"' << bad << '"';
  }
}

}  // namespace
}  // namespace attnlab::viz
