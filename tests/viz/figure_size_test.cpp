// What a paper can hold: the 72-panel layers x heads figure (DeiT-S: 12 layers x 6 heads
// on a 14 x 14 grid over a 224 x 224 picture) as PDF and SVG stays under 1 MB, because
// the picture is embedded once and each map at about one pixel per point. The picture here
// is noise (the worst case for compression); the maps are smooth with noise on top. Bytes
// are deterministic for a given cairo, so these are size checks, not timings.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <vector>

#include "viz/figures/attention_maps.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

RgbaImage noise_picture(int side) {
  RgbaImage img;
  img.width = img.height = side;
  img.rgba.resize(size_t(side) * side * 4);
  uint32_t state = 12345;
  for (size_t i = 0; i < img.rgba.size(); ++i) {
    state = state * 1664525u + 1013904223u;
    img.rgba[i] = (i % 4 == 3) ? 255 : uint8_t(state >> 24);
  }
  return img;
}

std::vector<analysis::Array> layer_maps(int layers, int heads, int side) {
  std::vector<analysis::Array> out;
  for (int l = 0; l < layers; ++l) {
    analysis::Array a;
    a.name = "maps__L" + std::to_string(l);
    a.shape = {heads, side, side};
    a.axes = {"head", "row", "col"};
    for (int h = 0; h < heads; ++h)
      for (int y = 0; y < side; ++y)
        for (int x = 0; x < side; ++x)
          a.data.push_back(float(1.0 + std::sin(0.3 * (l + 1) * y + h) * std::cos(0.2 * x * (h + 1)) +
                                 0.1 * std::sin(97.0 * (x * side + y + l * 7 + h * 13))));
    out.push_back(std::move(a));
  }
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(FigureSize, LayersByHeadsFigureUnderOneMegabyteWithThePictureEmbeddedOnce) {
  const RgbaImage picture = noise_picture(224);
  const std::vector<analysis::Array> arrays = layer_maps(12, 6, 14);
  std::vector<LayerMaps> layers;
  for (size_t l = 0; l < arrays.size(); ++l)
    layers.push_back({"layer " + std::to_string(l), &arrays[l]});
  MapQuery query{"query (7, 7)", GridCell{7, 7}, 14, 14};
  const Figure f = layers_heads_figure(picture, layers, query, "deit_small").figure;
  ASSERT_EQ(f.panels.size(), 72u);

  const std::string pdf = render_pdf(f), svg = render_svg(f);
  std::cout << "[figure size] 72 panels: PDF " << pdf.size() << " bytes, SVG " << svg.size()
            << " bytes\n";
  EXPECT_LE(pdf.size(), 1000000u);
  EXPECT_LE(svg.size(), 1000000u);
  // One 224 x 224 image (the greyscale picture under every map) in the PDF; the maps are
  // the other images, each far smaller.
  EXPECT_EQ(count(pdf, "/Width 224"), 1u);
  EXPECT_EQ(count(pdf, "/Subtype /Image"), 73u);
  EXPECT_EQ(count(svg, "width=\"224\" height=\"224\" xlink:href=\"data:"), 1u);
  EXPECT_EQ(count(svg, "xlink:href=\"data:image/png"), 73u);
}

}  // namespace
}  // namespace attnlab::viz
