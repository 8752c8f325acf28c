// viz::head_extremes_figure (issue 70 goal 5): one row per head ("L3 H2"), two panels per
// row (the k sharpest thumbnails, a gap, the k broadest), each thumbnail the picture the
// model saw with its normalised entropy over it and its sharpest query patch outlined
// where it lies (picture / grid), the two groups' headers in the SVG text, the caption's
// facts, the split into figures of kHeadExtremesRowsPerFigure rows, the example under a
// hit, and clear std::invalid_argument messages for inputs that do not fit.
//
// ATTNLAB_HEAD_EXTREMES_SAMPLE=/path/sample.png writes a sample figure (6 heads, k = 5,
// synthetic 28x28 grey pictures; ATTNLAB_HEAD_EXTREMES_HEADS=72: the first figure of 72
// heads) for looking at.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/viz/figure_test_util.h"
#include "viz/figure_layout.h"
#include "viz/figures/head_extremes.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

// A side x side grey picture: kind 0 stripes (period 2 + param % 6, vertical when param is
// even), kind 1 a Gaussian blob whose centre and size follow param, kind 2 a checkerboard.
RgbaImage hx_test_picture(int kind, int param, int side = 28, int height = 0) {
  RgbaImage img;
  img.width = side;
  img.height = height > 0 ? height : side;
  img.rgba.resize(size_t(img.width) * size_t(img.height) * 4);
  const double cx = 4 + (param * 7) % 20, cy = 4 + (param * 11) % 20,
               sigma = 2.5 + (param % 4) * 1.5;
  const int period = 2 + param % 6;
  for (int y = 0; y < img.height; ++y)
    for (int x = 0; x < img.width; ++x) {
      double v = 0;
      if (kind == 0)
        v = ((param % 2 == 0 ? x : y) / period) % 2 ? 0.85 : 0.15;
      else if (kind == 1)
        v = 0.1 +
            0.85 * std::exp(-((x - cx) * (x - cx) + (y - cy) * (y - cy)) / (2 * sigma * sigma));
      else
        v = ((x / 4 + y / 4) % 2) ? 0.7 : 0.3;
      const auto g = uint8_t(std::lround(255 * v));
      uint8_t* p = &img.rgba[(size_t(y) * size_t(img.width) + size_t(x)) * 4];
      p[0] = p[1] = p[2] = g;
      p[3] = 255;
    }
  return img;
}

struct HxData {
  // The examples point into it: reserved once, never grown afterwards.
  std::vector<RgbaImage> pictures;
  std::vector<HeadExtremes> heads;
};

// `n_heads` heads (layers of 4 heads), k examples each side; example i of a head has value
// 0.05 + 0.01 * i (+ 0.6 for broadest), patch (i % grid, (2 i + 1) % grid) on a 7x7 grid.
HxData hx_data(int n_heads, int k) {
  HxData d;
  d.pictures.reserve(size_t(n_heads) * size_t(k) * 2);
  for (int h = 0; h < n_heads; ++h) {
    HeadExtremes he;
    he.layer = h / 4;
    he.head = h % 4;
    for (int side = 0; side < 2; ++side)
      for (int i = 0; i < k; ++i) {
        d.pictures.push_back(hx_test_picture(side == 0 ? 1 : (i % 2 ? 2 : 0), h * 5 + i));
        HeadExample e;
        e.picture = &d.pictures.back();
        e.name = "#" + std::to_string(100 * h + 10 * side + i);
        e.value = side == 0 ? 0.05 + 0.01 * i : 0.95 - 0.01 * i;
        e.grid_h = e.grid_w = 7;
        e.patch_y = i % 7;
        e.patch_x = (2 * i + 1) % 7;
        (side == 0 ? he.sharpest : he.broadest).push_back(e);
      }
    d.heads.push_back(he);
  }
  return d;
}

template <typename T>
std::vector<const T*> hx_items(const Panel& p) {
  std::vector<const T*> out;
  for (const auto& item : p.items)
    if (const auto* v = std::get_if<T>(&item)) out.push_back(v);
  return out;
}

// The bright patch outlines of a panel (each patch also has a dark halo under it).
std::vector<const RectOutline*> hx_patches(const Panel& p) {
  std::vector<const RectOutline*> out;
  for (const RectOutline* r : hx_items<RectOutline>(p))
    if (r->color.r > 0.5) out.push_back(r);
  return out;
}

TEST(HeadExtremesFigure, OneRowPerHeadWithTheSharpestThenAGapThenTheBroadest) {
  const HxData d = hx_data(3, 4);
  const CaptionedFigure cf = head_extremes_figure(d.heads, "vit_s16");
  const Figure& f = cf.figure;
  ASSERT_EQ(f.panels.size(), 6u);
  EXPECT_EQ(f.cols, 2);
  EXPECT_EQ(f.rows(), 3);
  ASSERT_EQ(f.row_labels.size(), 3u);
  EXPECT_EQ(f.row_labels[0], "L0 H0");
  EXPECT_EQ(f.row_labels[2], "L0 H2");
  ASSERT_EQ(f.col_labels.size(), 2u);
  EXPECT_EQ(f.col_labels[0], "sharpest (lowest entropy)");
  EXPECT_EQ(f.col_labels[1], "broadest (highest)");
  const FigureLayout L = layout_figure(f);
  for (size_t i = 0; i < f.panels.size(); ++i) {
    const Panel& p = f.panels[i];
    EXPECT_TRUE(p.image);
    EXPECT_FALSE(p.x.show || p.y.show) << "no axes";
    const auto images = hx_items<ImageLayer>(p);
    ASSERT_EQ(images.size(), 4u) << i;
    const auto& list = i % 2 ? d.heads[i / 2].broadest : d.heads[i / 2].sharpest;
    for (size_t s = 0; s < images.size(); ++s) {
      ASSERT_TRUE(images[s]->image);
      EXPECT_EQ(images[s]->image->rgba, list[s].picture->rgba) << "the example's own picture";
      // Thumbnails left to right, about 0.45 in, a small space between them.
      const PointXY a = data_to_points(p, L.panels[i], images[s]->x0, images[s]->y0);
      const PointXY b = data_to_points(p, L.panels[i], images[s]->x1, images[s]->y1);
      EXPECT_NEAR(b.x - a.x, 0.45 * 72, 0.5);
      EXPECT_NEAR(b.y - a.y, 0.45 * 72, 0.5);
      if (s > 0) {
        const PointXY prev = data_to_points(p, L.panels[i], images[s - 1]->x1, images[s - 1]->y0);
        EXPECT_GT(a.x, prev.x);
        EXPECT_LT(a.x - prev.x, 6) << "thumbnails of a group close together";
        EXPECT_NEAR(a.y, prev.y, 1e-9) << "one row";
      }
    }
  }
  // Row r's panels share a row, below row r - 1's; the broadest group right of the
  // sharpest, separated by a gap much wider than the space between thumbnails.
  for (size_t r = 0; r < 3; ++r) {
    const Panel& left = f.panels[2 * r];
    const Panel& right = f.panels[2 * r + 1];
    const auto li = hx_items<ImageLayer>(left);
    const auto ri = hx_items<ImageLayer>(right);
    const PointXY last = data_to_points(left, L.panels[2 * r], li.back()->x1, li.back()->y0);
    const PointXY first = data_to_points(right, L.panels[2 * r + 1], ri[0]->x0, ri[0]->y0);
    EXPECT_NEAR(first.y, last.y, 1e-9);
    EXPECT_GT(first.x - last.x, 15) << "a gap between the two groups";
    if (r > 0) {
      const auto above = hx_items<ImageLayer>(f.panels[2 * r - 2]);
      const PointXY a =
          data_to_points(f.panels[2 * r - 2], L.panels[2 * r - 2], above[0]->x0, above[0]->y1);
      const PointXY b = data_to_points(left, L.panels[2 * r], li[0]->x0, li[0]->y0);
      EXPECT_GT(b.y, a.y + 5) << "rows apart, room for the values";
      EXPECT_LT(b.y, a.y + 25) << "compact rows";
    }
  }
  // Every row fits: the figure is no taller than its rows need.
  const PanelLayout& bottom = L.panels.back();
  EXPECT_LT(L.height_pt - (bottom.plot.y + bottom.plot.h), 10);
  EXPECT_LE(f.width_in, kPageWidthIn + 1e-9);
}

TEST(HeadExtremesFigure, EachThumbnailIsTitledWithItsValue) {
  HxData d = hx_data(2, 3);
  d.heads[0].sharpest[0].value = 0.2125;
  d.heads[0].sharpest[1].value = 0.3;
  d.heads[1].broadest[2].value = 0.996;
  const Figure f = head_extremes_figure(d.heads, "m").figure;
  for (size_t i = 0; i < f.panels.size(); ++i) {
    const auto& list = i % 2 ? d.heads[i / 2].broadest : d.heads[i / 2].sharpest;
    const auto labels = hx_items<TextLabel>(f.panels[i]);
    const auto images = hx_items<ImageLayer>(f.panels[i]);
    ASSERT_EQ(labels.size(), list.size());
    for (size_t s = 0; s < labels.size(); ++s) {
      char want[16];
      std::snprintf(want, sizeof want, "%.2f", list[s].value);
      EXPECT_EQ(labels[s]->text, want);
      EXPECT_NEAR(labels[s]->x, (images[s]->x0 + images[s]->x1) / 2, 1e-9) << "centred over it";
      EXPECT_LT(labels[s]->y, images[s]->y0) << "above it";
      EXPECT_GE(labels[s]->y, f.panels[i].y.min) << "inside the panel (not clipped)";
    }
  }
  EXPECT_EQ(hx_items<TextLabel>(f.panels[0])[0]->text, "0.21");
  EXPECT_EQ(hx_items<TextLabel>(f.panels[0])[1]->text, "0.30");
  EXPECT_EQ(hx_items<TextLabel>(f.panels[3])[2]->text, "1.00");
}

TEST(HeadExtremesFigure, ThePatchRectangleIsThePatchOfThePicture) {
  HxData d = hx_data(1, 3);
  // A 56 x 28 picture (twice as wide as tall) on a 4 x 8 grid, patch row 1, column 5.
  const RgbaImage wide = hx_test_picture(0, 3, 56, 28);
  HeadExample& e = d.heads[0].sharpest[1];
  e.picture = &wide;
  e.grid_h = 4;
  e.grid_w = 8;
  e.patch_y = 1;
  e.patch_x = 5;
  d.heads[0].sharpest[2].patch_y = d.heads[0].sharpest[2].patch_x = -1;  // none
  const Figure f = head_extremes_figure(d.heads, "m").figure;
  const FigureLayout L = layout_figure(f);
  const Panel& p = f.panels[0];
  const auto images = hx_items<ImageLayer>(p);
  const auto rects = hx_patches(p);
  ASSERT_EQ(rects.size(), 2u) << "no rectangle on the example without a patch";
  // The picture keeps its aspect: as wide as the slot, half as tall.
  const PointXY a = data_to_points(p, L.panels[0], images[1]->x0, images[1]->y0);
  const PointXY b = data_to_points(p, L.panels[0], images[1]->x1, images[1]->y1);
  EXPECT_NEAR((b.x - a.x) / (b.y - a.y), 2.0, 1e-6);
  // In figure points: the picture's rectangle divided by the grid.
  const PointXY r0 = data_to_points(p, L.panels[0], rects[1]->x0, rects[1]->y0);
  const PointXY r1 = data_to_points(p, L.panels[0], rects[1]->x1, rects[1]->y1);
  const double cw = (b.x - a.x) / 8, ch = (b.y - a.y) / 4;
  EXPECT_NEAR(r0.x, a.x + 5 * cw, 1e-6);
  EXPECT_NEAR(r1.x, a.x + 6 * cw, 1e-6);
  EXPECT_NEAR(r0.y, a.y + 1 * ch, 1e-6);
  EXPECT_NEAR(r1.y, a.y + 2 * ch, 1e-6);
  // The first example: patch (0, 1) of 7 x 7 on a square picture.
  const PointXY s0 = data_to_points(p, L.panels[0], images[0]->x0, images[0]->y0);
  const PointXY s1 = data_to_points(p, L.panels[0], images[0]->x1, images[0]->y1);
  const PointXY q0 = data_to_points(p, L.panels[0], rects[0]->x0, rects[0]->y0);
  EXPECT_NEAR(q0.x, s0.x + (s1.x - s0.x) / 7, 1e-6);
  EXPECT_NEAR(q0.y, s0.y, 1e-6);
  // The broadest examples' patches are outlined too.
  EXPECT_EQ(hx_patches(f.panels[1]).size(), 3u);
  // Drawn: the middle of the rectangle's top edge is red in the picture (at 400 dpi, 2.2
  // pixels per point), and the patch's centre keeps the picture's grey.
  constexpr double kDpi = 400;
  const RgbaImage img = render_rgba(f, kDpi);
  const auto px = [&](double xp, double yp) {
    const size_t i = (size_t(std::lround(yp * kDpi / 72 - 0.5)) * size_t(img.width) +
                      size_t(std::lround(xp * kDpi / 72 - 0.5))) *
                     4;
    return std::vector<int>{img.rgba[i], img.rgba[i + 1], img.rgba[i + 2]};
  };
  const std::vector<int> edge = px((r0.x + r1.x) / 2, r0.y);
  EXPECT_GT(edge[0], 200);
  EXPECT_LT(edge[1], 100);
  EXPECT_LT(edge[2], 100);
  const std::vector<int> inside = px((r0.x + r1.x) / 2, (r0.y + r1.y) / 2);
  EXPECT_EQ(inside[0], inside[1]) << "grey";
  EXPECT_EQ(inside[1], inside[2]) << "grey";
}

TEST(HeadExtremesFigure, TheHeadersRowLabelsAndValuesAreInTheSvgText) {
  HxData d = hx_data(6, 2);
  d.heads[5].layer = 3;
  d.heads[5].head = 2;
  d.heads[5].sharpest[0].value = 0.21;
  const CaptionedFigure cf = head_extremes_figure(d.heads, "vit_s16");
  const std::string svg = render_svg(cf.figure);
  for (const std::string s :
       {"sharpest (lowest entropy)", "broadest (highest)", "L3 H2", "L0 H0", "0.21", "0.95"})
    EXPECT_NE(svg.find(">" + s + "<"), std::string::npos) << s;
  EXPECT_NE(svg.find("vit_s16"), std::string::npos) << "the model in the title";
}

TEST(HeadExtremesFigure, TheCaptionSaysWhatIsShown) {
  const HxData d = hx_data(16, 5);
  const CaptionedFigure cf = head_extremes_figure(d.heads, "deit_t16");
  for (const std::string s :
       {"deit_t16", "16 attention heads",
        "the 5 images with the lowest mean normalised attention "
        "entropy",
        "the 5 with the highest", "The number over each image is that entropy",
        "rectangle outlines the query patch"})
    EXPECT_NE(cf.caption.find(s), std::string::npos) << s << "\n" << cf.caption;
  EXPECT_EQ(cf.caption.find("up to"), std::string::npos);
  // Fewer examples for one head: "up to k".
  HxData fewer = hx_data(2, 5);
  fewer.heads[1].broadest.resize(3);
  const CaptionedFigure cg = head_extremes_figure(fewer.heads, "m");
  EXPECT_NE(cg.caption.find("up to 5 images"), std::string::npos) << cg.caption;
  EXPECT_EQ(hx_items<ImageLayer>(cg.figure.panels[3]).size(), 3u);
  EXPECT_EQ(cg.figure.panels[3].x.max, cg.figure.panels[0].x.max) << "the same slots";
}

TEST(HeadExtremesFigure, ManyHeadsSplitIntoFiguresOfTwelveRows) {
  const HxData d = hx_data(30, 2);
  const std::vector<CaptionedFigure> parts = head_extremes_figures(d.heads, "m");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].figure.rows(), kHeadExtremesRowsPerFigure);
  EXPECT_EQ(parts[1].figure.rows(), kHeadExtremesRowsPerFigure);
  EXPECT_EQ(parts[2].figure.rows(), 30 - 2 * kHeadExtremesRowsPerFigure);
  EXPECT_NE(parts[1].figure.title.find("heads 13\u201324 of 30"), std::string::npos)
      << parts[1].figure.title;
  EXPECT_NE(parts[2].caption.find("heads 25\u201330 of 30"), std::string::npos);
  EXPECT_EQ(parts[1].figure.row_labels[0], "L3 H0") << "head 12: layer 3, head 0";
  // One part: no part in the title.
  const std::vector<CaptionedFigure> one = head_extremes_figures(hx_data(4, 2).heads, "m");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].figure.title.find("heads"), std::string::npos);
  // Compact rows: twelve fit a page.
  EXPECT_LT(parts[0].figure.height_in, 9.0);
}

TEST(HeadExtremesFigure, ThumbnailsShrinkToFitTheWidth) {
  const HxData d = hx_data(2, 10);
  const Figure f = head_extremes_figure(d.heads, "m").figure;
  EXPECT_NEAR(f.width_in, kPageWidthIn, 1e-9);
  const FigureLayout L = layout_figure(f);
  const auto images = hx_items<ImageLayer>(f.panels[1]);
  const PointXY a = data_to_points(f.panels[1], L.panels[1], images[0]->x0, 0);
  const PointXY b = data_to_points(f.panels[1], L.panels[1], images[0]->x1, 0);
  EXPECT_LT(b.x - a.x, 0.45 * 72);
  EXPECT_GT(b.x - a.x, 0.2 * 72);
  const PointXY last = data_to_points(f.panels[1], L.panels[1], images.back()->x1, 0);
  EXPECT_LE(last.x, L.width_pt) << "inside the figure";
  // Smaller thumbnails asked for: a narrower figure.
  HeadExtremesFigureOptions o;
  o.thumb_in = 0.3;
  const Figure g = head_extremes_figure(hx_data(2, 4).heads, "m", o).figure;
  const FigureLayout M = layout_figure(g);
  const auto gi = hx_items<ImageLayer>(g.panels[0]);
  const PointXY c = data_to_points(g.panels[0], M.panels[0], gi[0]->x0, 0);
  const PointXY e = data_to_points(g.panels[0], M.panels[0], gi[0]->x1, 0);
  EXPECT_NEAR(e.x - c.x, 0.3 * 72, 0.5);
  EXPECT_LT(g.width_in, 4.0);
}

TEST(HeadExtremesFigure, AHitResolvesToTheExampleUnderIt) {
  const HxData d = hx_data(3, 4);
  const Figure f = head_extremes_figure(d.heads, "m").figure;
  const FigureLayout L = layout_figure(f);
  constexpr double kDpi = 100;
  // The centre of head 2's third broadest thumbnail.
  const Panel& p = f.panels[5];
  const auto images = hx_items<ImageLayer>(p);
  const PointXY c = data_to_points(p, L.panels[5], (images[2]->x0 + images[2]->x1) / 2,
                                   (images[2]->y0 + images[2]->y1) / 2);
  const auto hit = hit_test(f, L, c.x * kDpi / 72, c.y * kDpi / 72, kDpi);
  ASSERT_TRUE(hit.has_value());
  const auto ex = head_extremes_example_at(d.heads, *hit);
  ASSERT_TRUE(ex.has_value());
  EXPECT_EQ(ex->head, 2u);
  EXPECT_TRUE(ex->broadest);
  EXPECT_EQ(ex->example, 2u);
  EXPECT_EQ(d.heads[ex->head].broadest[ex->example].name, "#212");
  // Between two thumbnails, or over the value: nothing.
  EXPECT_FALSE(head_extremes_example_at(d.heads, FigureHit{5, images[2]->x1 + 0.05, 0.5}));
  EXPECT_FALSE(head_extremes_example_at(d.heads, FigureHit{5, images[2]->x0 + 0.5, -0.1}));
  EXPECT_FALSE(head_extremes_example_at(d.heads, FigureHit{6, 0.5, 0.5})) << "no such head";
  const auto first = head_extremes_example_at(d.heads, FigureHit{0, 0.5, 0.5});
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->broadest);
  EXPECT_EQ(first->example, 0u);
}

TEST(HeadExtremesFigure, OnePictureSharedByHeadsIsOneImage) {
  HxData d = hx_data(2, 2);
  d.heads[1].sharpest[0].picture = d.heads[0].sharpest[0].picture;
  const Figure f = head_extremes_figure(d.heads, "m").figure;
  EXPECT_EQ(hx_items<ImageLayer>(f.panels[0])[0]->image.get(),
            hx_items<ImageLayer>(f.panels[2])[0]->image.get());
  EXPECT_NE(hx_items<ImageLayer>(f.panels[0])[1]->image.get(),
            hx_items<ImageLayer>(f.panels[0])[0]->image.get());
}

TEST(HeadExtremesFigure, RendersToEveryFormat) {
  const HxData d = hx_data(4, 3);
  const CaptionedFigure cf = head_extremes_figure(d.heads, "vit_s16");
  const auto dir = testing::temp_dir("head_extremes");
  for (FigureFormat fmt : {FigureFormat::Svg, FigureFormat::Pdf, FigureFormat::Png}) {
    const std::string path = (dir / (std::string("h.") + figure_format_name(fmt))).string();
    write_figure(cf.figure, path, fmt, 100);
    const std::string bytes = testing::read_text(path);
    ASSERT_GT(bytes.size(), 1000u) << path;
    if (fmt == FigureFormat::Png) {
      const RgbaImage img = testing::read_png(path);
      EXPECT_EQ(img.width, int(std::lround(cf.figure.width_in * 100)));
      EXPECT_EQ(img.height, int(std::lround(cf.figure.height_in * 100)));
    }
  }
  std::filesystem::remove_all(dir);
}

void hx_expect_error(const std::vector<HeadExtremes>& heads, const std::string& want) {
  try {
    head_extremes_figure(heads, "m");
    ADD_FAILURE() << "no error; expected: " << want;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos)
        << "got: " << e.what() << "\nwant: " << want;
  }
}

TEST(HeadExtremesFigure, InputsThatDoNotFitAreRefusedWithClearMessages) {
  hx_expect_error({}, "head extremes figure: no heads to draw");
  EXPECT_THROW(head_extremes_figures({}, "m"), std::invalid_argument);
  const HxData good = hx_data(2, 3);
  {
    auto heads = good.heads;
    heads[1].layer = 3;
    heads[1].head = 2;
    heads[1].sharpest.clear();
    heads[1].broadest.clear();
    hx_expect_error(heads,
                    "head L3 H2 has no examples (its sharpest and broadest lists are empty)");
  }
  {
    auto heads = good.heads;
    heads[0].broadest[2].picture = nullptr;
    hx_expect_error(heads, "the broadest example 2 (\"#12\") of head L0 H0 has no picture (null)");
  }
  {
    auto heads = good.heads;
    const RgbaImage empty;
    heads[1].sharpest[0].picture = &empty;
    hx_expect_error(heads,
                    "the sharpest example 0 (\"#100\") of head L0 H1 has a picture of zero size "
                    "(0x0)");
    RgbaImage short_pixels = hx_test_picture(0, 1);
    short_pixels.rgba.resize(10);
    heads[1].sharpest[0].picture = &short_pixels;
    hx_expect_error(heads, "has a 28x28 picture with 10 bytes, not width x height x 4");
  }
  {
    auto heads = good.heads;
    heads[0].sharpest[1].patch_y = 7;  // a 7 x 7 grid: rows 0..6
    hx_expect_error(heads,
                    "the sharpest example 1 (\"#1\") of head L0 H0: its patch (y 7, x 3) is "
                    "outside its 7x7 grid (rows x columns)");
    heads[0].sharpest[1].patch_y = 0;
    heads[0].sharpest[1].patch_x = -2;
    hx_expect_error(heads, "its patch (y 0, x -2) is outside its 7x7 grid");
    heads[0].sharpest[1].patch_x = -1;
    hx_expect_error(heads, "its patch (y 0, x -1) is outside its 7x7 grid");
    heads[0].sharpest[1].patch_y = heads[0].sharpest[1].patch_x = 0;
    heads[0].sharpest[1].grid_h = heads[0].sharpest[1].grid_w = 0;
    hx_expect_error(heads, "its patch (y 0, x 0) is outside its 0x0 grid");
    // No patch (-1, -1) needs no grid.
    heads[0].sharpest[1].patch_y = heads[0].sharpest[1].patch_x = -1;
    EXPECT_NO_THROW(head_extremes_figure(heads, "m"));
  }
  {
    auto heads = good.heads;
    heads[1].broadest[0].name.clear();
    heads[1].broadest[0].value = NAN;
    hx_expect_error(heads, "the broadest example 0 of head L0 H1 has a value that is not finite");
  }
  // Only one group given: drawn, the other group empty.
  auto heads = good.heads;
  heads[0].broadest.clear();
  const Figure f = head_extremes_figure(heads, "m").figure;
  EXPECT_TRUE(hx_items<ImageLayer>(f.panels[1]).empty());
  EXPECT_EQ(hx_items<ImageLayer>(f.panels[0]).size(), 3u);
}

// Not a check: ATTNLAB_HEAD_EXTREMES_SAMPLE=path.png writes a sample figure to look at.
TEST(HeadExtremesFigure, WritesASampleWhenAsked) {
  const char* path = std::getenv("ATTNLAB_HEAD_EXTREMES_SAMPLE");
  if (!path) GTEST_SKIP() << "set ATTNLAB_HEAD_EXTREMES_SAMPLE=/path/sample.png to write one";
  const char* n = std::getenv("ATTNLAB_HEAD_EXTREMES_HEADS");  // 6 unless given
  HxData d = hx_data(n ? std::max(1, std::atoi(n)) : 6, 5);
  // The sharpest patch on the blob's centre (hx_test_picture's kind 1), as a real head's.
  for (size_t h = 0; h < d.heads.size(); ++h)
    for (size_t i = 0; i < d.heads[h].sharpest.size(); ++i) {
      const int param = int(h) * 5 + int(i);
      d.heads[h].sharpest[i].patch_x = (4 + (param * 7) % 20) / 4;
      d.heads[h].sharpest[i].patch_y = (4 + (param * 11) % 20) / 4;
    }
  const CaptionedFigure cf = head_extremes_figures(d.heads, "vit_tiny").front();
  write_figure(cf.figure, path, FigureFormat::Png, 200);
  std::cout << cf.caption << "\n";
}

}  // namespace
}  // namespace attnlab::viz
