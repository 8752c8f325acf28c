// attnlab's PNG writer (viz/png_encode.h): lossless for every colour type, filter and level
// (decoded by libpng, straight RGBA, so translucent pixels are compared exactly too); the
// colour type is the smallest that holds the pixels; and every figure it writes has the
// same pixels as the writer it replaced (cairo's), in fewer bytes.
#include <gtest/gtest.h>
#include <png.h>

#include <cstring>
#include <random>
#include <string>

#include "tests/viz/sample_figures.h"
#include "viz/png_encode.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

// The file decoded by libpng's own reader as straight 8-bit RGBA; empty when libpng
// refuses it (message in *why).
RgbaImage decode(const std::string& png, std::string* why = nullptr) {
  png_image image{};
  image.version = PNG_IMAGE_VERSION;
  RgbaImage out;
  if (!png_image_begin_read_from_memory(&image, png.data(), png.size())) {
    if (why) *why = image.message;
    return out;
  }
  image.format = PNG_FORMAT_RGBA;
  out.width = int(image.width);
  out.height = int(image.height);
  out.rgba.resize(PNG_IMAGE_SIZE(image));
  if (!png_image_finish_read(&image, nullptr, out.rgba.data(), 0, nullptr)) {
    if (why) *why = image.message;
    return {};
  }
  return out;
}

int colour_type(const std::string& png) {
  return png.size() > 25 ? static_cast<unsigned char>(png[25]) : -1;  // IHDR's 10th byte
}

// w x h pixels drawn from `colours` random colours (0: every pixel its own random colour),
// opaque or with random alpha.
RgbaImage random_image(int w, int h, int colours, bool translucent, unsigned seed) {
  std::mt19937 rng(seed);
  std::vector<uint32_t> table;
  for (int i = 0; i < colours; ++i) table.push_back(rng());
  RgbaImage im;
  im.width = w;
  im.height = h;
  im.rgba.resize(size_t(w) * size_t(h) * 4);
  for (size_t i = 0; i < im.pixel_count(); ++i) {
    const uint32_t c = colours > 0 ? table[rng() % table.size()] : rng();
    for (int k = 0; k < 4; ++k) im.rgba[i * 4 + size_t(k)] = uint8_t(c >> (8 * k));
    if (!translucent) im.rgba[i * 4 + 3] = 255;
  }
  // Smooth stretches too, so the filters that predict from neighbours have work to do.
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w / 3; ++x)
      std::memcpy(&im.rgba[(size_t(y) * w + x) * 4], &im.rgba[size_t(y) * w * 4], 4);
  return im;
}

TEST(PngEncode, EveryColourTypeFilterAndLevelDecodesToTheSamePixels) {
  struct Case {
    const char* what;
    RgbaImage image;
    int type, type_without_palette;  // PNG colour types: 3 palette, 2 RGB, 6 RGBA
  };
  const std::vector<Case> cases = {
      {"opaque, many colours", random_image(61, 17, 0, false, 1), 2, 2},
      {"translucent, many colours", random_image(33, 20, 0, true, 2), 6, 6},
      {"opaque, 256 colours", random_image(64, 64, 256, false, 3), 3, 2},
      {"translucent, 7 colours", random_image(9, 40, 7, true, 4), 3, 6},
      {"opaque, 257 colours", random_image(70, 70, 257, false, 5), 2, 2},
      {"one pixel", random_image(1, 1, 1, false, 6), 3, 2},
      {"one long row", random_image(3000, 1, 0, false, 7), 2, 2},
  };
  for (const Case& c : cases) {
    for (PngFilter f : {PngFilter::None, PngFilter::Sub, PngFilter::Up, PngFilter::Average,
                        PngFilter::Paeth, PngFilter::Adaptive})
      for (int level : {0, 1, 6, 12})
        for (bool palette : {true, false}) {
          PngSettings s;
          s.filter = f;
          s.level = level;
          s.allow_palette = palette;
          const std::string png = encode_png(c.image, 96, s);
          std::string why;
          const RgbaImage back = decode(png, &why);
          const std::string label = std::string(c.what) + ", filter " + std::to_string(int(f)) +
                                    ", level " + std::to_string(level);
          ASSERT_EQ(back.width, c.image.width) << label << ": " << why;
          ASSERT_EQ(back.height, c.image.height) << label;
          EXPECT_TRUE(back.rgba == c.image.rgba) << label << ": pixels differ";
          EXPECT_EQ(colour_type(png), palette ? c.type : c.type_without_palette) << label;
        }
  }
}

TEST(PngEncode, RgbaWhenAskedAndClearErrors) {
  const RgbaImage im = random_image(20, 10, 0, false, 8);
  PngSettings s;
  s.allow_rgb = false;
  s.allow_palette = false;
  EXPECT_EQ(colour_type(encode_png(im, 72, s)), 6);
  EXPECT_THROW(encode_png(RgbaImage{}, 72), std::invalid_argument);
  EXPECT_THROW(encode_png(im, 0), std::invalid_argument);
  s.level = 13;
  EXPECT_THROW(encode_png(im, 72, s), std::invalid_argument);
}

// The figures as the replaced writer (cairo's) wrote them and as this one does: the same
// pixels exactly (both encode the same cairo surface losslessly), and an opaque figure
// with no alpha channel, as cairo writes it. The bytes themselves are compared by the
// profile (bench/figure_profile.cpp), not here: how well two compressors do on a picture
// is no property of either, and a figure's pixels differ a little between machines.
TEST(PngEncode, FiguresKeepThePixelsOfThePreviousWriter) {
  for (const Figure& f : {testing::sample_plot_figure(), testing::sample_map_figure()})
    for (double dpi : {72.0, 150.0}) {
      const std::string ours = render_png(f, dpi), cairos = render_png_with_cairo_writer(f, dpi);
      const RgbaImage a = decode(ours), b = decode(cairos);
      ASSERT_FALSE(a.empty());
      ASSERT_EQ(a.width, b.width);
      ASSERT_EQ(a.height, b.height);
      EXPECT_TRUE(a.rgba == b.rgba) << f.title << " at " << dpi << " dpi: pixels differ";
      EXPECT_NE(colour_type(ours), 6)
          << f.title << " at " << dpi << " dpi: RGBA for an opaque figure";
    }
}

}  // namespace
}  // namespace attnlab::viz
