// viz::value_at, the value under the mouse in a figure tab: a heatmap cell named by the
// axes' tick labels, the nearest point of each line series (within half a step), the bar
// under the mouse, and nothing between bars or over a picture.
#include <gtest/gtest.h>

#include "viz/figure_hover.h"
#include "viz/overlay.h"

namespace attnlab::viz {
namespace {

TEST(FigureHover, HeatmapCellIsNamedByTheAxesTickLabels) {
  Panel p;
  p.x.label = "head";
  p.y.label = "layer";
  p.x.ticks = {0.5, 1.5, 2.5};
  p.x.tick_labels = {"h0", "h1", "h2"};
  HeatmapLayer h;
  h.rows = 2;
  h.cols = 3;
  h.values = {1, 2, 3, 4, 5, 6};
  h.x0 = 0, h.x1 = 3, h.y0 = 0, h.y1 = 2;
  p.items.emplace_back(h);
  const PointValue v = value_at(p, 1.2, 1.7);  // row 1, col 1
  EXPECT_EQ(v.value, "5");
  EXPECT_EQ(v.text, "layer 1.5 · head h1: 5");
  EXPECT_TRUE(value_at(p, 3.5, 0.5).text.empty());  // outside the heatmap
}

TEST(FigureHover, LinesGiveTheirNearestPointWithinHalfAStep) {
  Panel p;
  p.x.label = "layer";
  LineSeries a;
  a.x = {0, 1, 2, 3};
  a.y = {10, 11, 12, 13};
  a.label = "kv rank";
  LineSeries b = a;
  b.y = {20, 21, 22, 23};
  b.label = "output rank";
  LineSeries full;  // an unlabelled reference line: not named while labelled ones answer
  full.x = {0, 3};
  full.y = {64, 64};
  p.items.emplace_back(full);
  p.items.emplace_back(a);
  p.items.emplace_back(b);
  const PointValue v = value_at(p, 2.2, 0);
  EXPECT_EQ(v.text, "kv rank: layer 2 → 12\noutput rank: layer 2 → 22");
  EXPECT_EQ(v.value, "12");  // the first series' number goes to the clipboard
}

TEST(FigureHover, BarsAnswerOnlyUnderTheBar) {
  Panel p;
  BarSeries b;
  b.x = {0, 1};
  b.height = {0.25, 0.75};
  b.width = 0.5;
  b.label = "share";
  p.items.emplace_back(b);
  EXPECT_EQ(value_at(p, 1.1, 0).text, "share: 1 → 0.75");
  EXPECT_TRUE(value_at(p, 0.5, 0).text.empty());  // between the bars
}

TEST(FigureHover, PicturesHaveNoValue) {
  RgbaImage img;
  img.width = img.height = 4;
  img.rgba.assign(64, 255);
  const Panel p = image_panel(img);
  EXPECT_TRUE(value_at(p, 2, 2).text.empty());
}

}  // namespace
}  // namespace attnlab::viz
