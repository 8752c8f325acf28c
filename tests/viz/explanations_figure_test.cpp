// The Fig. 4-style explanation grid: an input row then one row per model, a column per
// image, each map labelled with its class; a model without a map for an image gets a
// marked blank panel, and inconsistent inputs are refused with a message naming them.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "viz/figures/explanations.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

RgbaImage picture(int side, uint8_t shade) {
  RgbaImage im;
  im.width = im.height = side;
  im.rgba.assign(size_t(side) * side * 4, shade);
  for (size_t i = 3; i < im.rgba.size(); i += 4) im.rgba[i] = 255;
  return im;
}

analysis::Array map(int rows, int cols) {
  analysis::Array a;
  a.name = "gradcam__img";
  a.shape = {rows, cols};
  a.axes = {"y", "x"};
  for (int i = 0; i < rows * cols; ++i) a.data.push_back(float(i % 5));
  return a;
}

TEST(ExplanationFigure, InputRowThenOneRowPerModelWithClassLabels) {
  const RgbaImage cat = picture(32, 90), cup = picture(32, 200);
  const analysis::Array a = map(4, 4), b = map(2, 3);
  const std::vector<ExplanationImage> images = {{"cat", &cat}, {"cup", &cup}};
  const std::vector<ExplanationRow> rows = {
      {"deit", {{&a, &cat, "tabby (281)"}, {&a, &cup, "cup (968)"}}},
      {"litv2", {{&b, &cat, "tiger cat (282)"}, {nullptr, nullptr, ""}}}};
  const CaptionedFigure f = explanation_grid_figure(images, rows, "Grad-CAM");
  EXPECT_EQ(f.figure.cols, 2);
  ASSERT_EQ(f.figure.panels.size(), 6u);
  EXPECT_EQ(f.figure.row_labels, (std::vector<std::string>{"input", "deit", "litv2"}));
  EXPECT_EQ(f.figure.panels[0].title, "cat");
  EXPECT_EQ(f.figure.panels[1].title, "cup");
  EXPECT_EQ(f.figure.panels[2].title, "tabby (281)");
  EXPECT_EQ(f.figure.panels[4].title, "tiger cat (282)");
  EXPECT_EQ(f.figure.panels[5].title, "(no map)");
  EXPECT_NE(f.caption.find("Fig. 4"), std::string::npos);
  EXPECT_NE(f.caption.find("litv2 2\u00d73"), std::string::npos) << f.caption;
  const RgbaImage img = render_rgba(f.figure, 100);
  EXPECT_EQ(img.width, int(std::lround(f.figure.width_in * 100)));
}

TEST(ExplanationFigure, RefusesInconsistentInputs) {
  const RgbaImage cat = picture(16, 90);
  const analysis::Array a = map(4, 4);
  EXPECT_THROW(explanation_grid_figure({}, {{"deit", {}}}, "Grad-CAM"), std::invalid_argument);
  try {
    explanation_grid_figure({{"cat", &cat}}, {{"deit", {{&a, &cat, "x"}, {&a, &cat, "y"}}}},
                            "Grad-CAM");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("deit has 2 maps for 1 images"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace attnlab::viz
