// viz::projection_figure (issue 70): a panel per colouring with the same axes, every point
// drawn once per panel in its class's tab10/tab20 colour (grey without a label), legends
// with the class names and the correct/wrong counts, a viridis colour bar for a scalar, a
// point's circle where its coordinates say, renders to SVG/PDF/PNG quickly for 10 000
// points, and clear std::invalid_argument messages for inputs that do not fit.
//
// ATTNLAB_PROJECTION_SAMPLE=/path/sample.png writes a sample figure (2000 points in 10
// clusters, all four colourings) for looking at.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <stdexcept>

#include "tests/viz/figure_test_util.h"
#include "viz/figure_layout.h"
#include "viz/figures/projection.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

const std::vector<std::string> kProjClassNames = {
    "airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"};

// n points in `classes` Gaussian clusters on a circle; label i % classes (every 17th
// point without a label), prediction = label except every 7th point (the next class), a
// scalar that grows with the point's index.
ProjectionPoints proj_clusters(int n, int classes, unsigned seed = 7) {
  ProjectionPoints p;
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 1.f);
  for (int i = 0; i < n; ++i) {
    const int c = i % classes;
    const double a = 2 * M_PI * c / classes;
    p.xy.push_back(float(12 * std::cos(a)) + noise(rng));
    p.xy.push_back(float(6 * std::sin(a)) + 0.5f * noise(rng));
    p.labels.push_back(i % 17 == 5 ? -1 : c);
    p.predictions.push_back(i % 7 == 3 ? (c + 1) % classes : c);
    p.scalar.push_back(float(i) / float(n));
  }
  for (int c = 0; c < classes; ++c)
    p.class_names.push_back(c < int(kProjClassNames.size()) ? kProjClassNames[size_t(c)]
                                                            : "class" + std::to_string(c));
  p.scalar_name = "confidence";
  p.method = "t-SNE";
  return p;
}

const std::vector<ProjectionColouring> kProjAll = {
    ProjectionColouring::Label, ProjectionColouring::Prediction, ProjectionColouring::Correctness,
    ProjectionColouring::Scalar};

// The series that draw points (no legend label) and the legend entries of a panel.
std::vector<const LineSeries*> proj_point_series(const Panel& p) {
  std::vector<const LineSeries*> out;
  for (const auto& item : p.items)
    if (const auto* s = std::get_if<LineSeries>(&item); s && s->label.empty()) out.push_back(s);
  return out;
}
std::vector<std::string> proj_legend(const Panel& p) {
  std::vector<std::string> out;
  for (const auto& item : p.items)
    if (const auto* s = std::get_if<LineSeries>(&item); s && !s->label.empty()) {
      EXPECT_TRUE(s->x.empty()) << "a legend entry draws no point: " << s->label;
      out.push_back(s->label);
    }
  return out;
}

bool same_rgb(const Color& a, const Color& b) {
  return std::abs(a.r - b.r) < 1e-9 && std::abs(a.g - b.g) < 1e-9 && std::abs(a.b - b.b) < 1e-9;
}

// The colour point (x, y) is drawn in on the panel (exactly one series holds it).
Color proj_color_of(const Panel& p, double x, double y) {
  Color found{-1, -1, -1, -1};
  int hits = 0;
  for (const LineSeries* s : proj_point_series(p))
    for (size_t i = 0; i < s->x.size(); ++i)
      if (s->x[i] == x && s->y[i] == y) found = s->color, ++hits;
  EXPECT_EQ(hits, 1) << "point (" << x << ", " << y << ") drawn " << hits << " times";
  return found;
}

TEST(ProjectionFigure, OnePanelPerColouringWithTheSameAxesAndEveryPointOnce) {
  const ProjectionPoints pts = proj_clusters(300, 10);
  const CaptionedFigure cf = projection_figure(pts, kProjAll, "vit_s16");
  const Figure& f = cf.figure;
  ASSERT_EQ(f.panels.size(), 4u);
  EXPECT_EQ(f.cols, 2);
  EXPECT_EQ(f.panels[0].title, "label");
  EXPECT_EQ(f.panels[1].title, "prediction");
  EXPECT_EQ(f.panels[2].title, "correct / wrong");
  EXPECT_EQ(f.panels[3].title, "confidence");
  for (const Panel& p : f.panels) {
    EXPECT_EQ(p.x.min, f.panels[0].x.min);
    EXPECT_EQ(p.x.max, f.panels[0].x.max);
    EXPECT_EQ(p.y.min, f.panels[0].y.min);
    EXPECT_EQ(p.y.max, f.panels[0].y.max);
    EXPECT_EQ(p.x.label, "t-SNE 1");
    EXPECT_EQ(p.y.label, "t-SNE 2");
    size_t drawn = 0;
    for (const LineSeries* s : proj_point_series(p)) {
      EXPECT_EQ(s->width_pt, 0) << "points only, no lines";
      drawn += s->x.size();
      for (size_t i = 0; i < s->x.size(); ++i) {
        EXPECT_GE(s->x[i], p.x.min);
        EXPECT_LE(s->x[i], p.x.max);
        EXPECT_GE(s->y[i], p.y.min);
        EXPECT_LE(s->y[i], p.y.max);
      }
    }
    EXPECT_EQ(drawn, 300u) << p.title;
  }
  for (size_t i = 0; i < 3; ++i)
    EXPECT_TRUE(f.panels[i].legend && f.panels[i].legend_outside) << "legends beside the axes";
  ASSERT_TRUE(f.panels[3].colorbar.has_value());
  EXPECT_EQ(f.panels[3].colorbar->label, "confidence");
  EXPECT_EQ(f.panels[3].colorbar->cmap, Colormap::Viridis);
  EXPECT_FLOAT_EQ(float(f.panels[3].colorbar->vmin), 0.f);
  EXPECT_FLOAT_EQ(float(f.panels[3].colorbar->vmax), 299.f / 300.f);
  EXPECT_FALSE(f.panels[0].colorbar.has_value());
}

TEST(ProjectionFigure, PointsTakeTheirClassColourAndUnlabelledOnesAreGrey) {
  const ProjectionPoints pts = proj_clusters(300, 10);
  const Figure f = projection_figure(pts, kProjAll, "m").figure;
  for (size_t i : {0u, 1u, 9u, 13u, 22u}) {  // 22 % 17 == 5: no label
    const double x = pts.xy[2 * i], y = pts.xy[2 * i + 1];
    const int label = pts.labels[i], pred = pts.predictions[i];
    const Color grey = proj_color_of(f.panels[0], pts.xy[2 * 22], pts.xy[2 * 22 + 1]);
    EXPECT_TRUE(std::abs(grey.r - grey.g) < 1e-9 && std::abs(grey.g - grey.b) < 1e-9);
    if (label >= 0)
      EXPECT_TRUE(same_rgb(proj_color_of(f.panels[0], x, y), tab10_color(label))) << i;
    else
      EXPECT_TRUE(same_rgb(proj_color_of(f.panels[0], x, y), grey)) << i;
    EXPECT_TRUE(same_rgb(proj_color_of(f.panels[1], x, y), tab10_color(pred))) << i;
  }
  // tab10 and tab20 are matplotlib's tables.
  EXPECT_TRUE(same_rgb(tab10_color(3), color_hex(0xd62728)));
  EXPECT_TRUE(same_rgb(tab20_color(1), color_hex(0xaec7e8)));
  EXPECT_TRUE(same_rgb(tab20_color(19), color_hex(0x9edae5)));
  // Correct blue, wrong red (point 3: prediction 4, label 3), wrong drawn after correct.
  const Color wrong = proj_color_of(f.panels[2], pts.xy[6], pts.xy[7]);
  const Color right = proj_color_of(f.panels[2], pts.xy[0], pts.xy[1]);
  EXPECT_FALSE(same_rgb(wrong, right));
  const auto series = proj_point_series(f.panels[2]);
  ASSERT_GE(series.size(), 2u);
  EXPECT_TRUE(same_rgb(series.back()->color, wrong)) << "the wrong points are on top";
  bool seen_wrong = false;  // all of them: no correct point is drawn after a wrong one
  for (const LineSeries* ser : series) {
    seen_wrong |= same_rgb(ser->color, wrong);
    EXPECT_FALSE(seen_wrong && same_rgb(ser->color, right)) << "a correct point over a wrong one";
  }
  // The scalar panel: point 0 has the lowest value (viridis' first entry), the last point
  // the highest (its last entry).
  const Rgba8 lo = colormap_entry(Colormap::Viridis, 0),
              hi = colormap_entry(Colormap::Viridis, 255);
  EXPECT_TRUE(same_rgb(proj_color_of(f.panels[3], pts.xy[0], pts.xy[1]),
                       Color{lo.r / 255.0, lo.g / 255.0, lo.b / 255.0, 1}));
  EXPECT_TRUE(same_rgb(proj_color_of(f.panels[3], pts.xy[598], pts.xy[599]),
                       Color{hi.r / 255.0, hi.g / 255.0, hi.b / 255.0, 1}));
}

TEST(ProjectionFigure, LegendsNameTheClassesAndCountCorrectAndWrong) {
  const ProjectionPoints pts = proj_clusters(300, 10);
  size_t correct = 0, wrong = 0, unlabelled = 0;
  for (size_t i = 0; i < 300; ++i) {
    if (pts.labels[i] < 0)
      ++unlabelled;
    else
      ++(pts.labels[i] == pts.predictions[i] ? correct : wrong);
  }
  ASSERT_GT(wrong, 0u);
  ProjectionFigureOptions o;
  o.class_counts = true;
  const CaptionedFigure cf = projection_figure(pts, kProjAll, "vit_s16", o);
  const std::vector<std::string> legend = proj_legend(cf.figure.panels[0]);
  ASSERT_EQ(legend.size(), 11u);  // ten classes and "no label"
  const auto labelled_as = [&](int c) {
    size_t k = 0;
    for (size_t i = 0; i < 300; ++i) k += pts.labels[i] == c;
    return std::to_string(k);
  };
  EXPECT_EQ(legend[0], "airplane (" + labelled_as(0) + ")");
  EXPECT_EQ(legend[3], "cat (" + labelled_as(3) + ")");
  EXPECT_EQ(legend[9], "truck (" + labelled_as(9) + ")");
  EXPECT_EQ(legend[10], "no label (" + std::to_string(unlabelled) + ")");
  const std::vector<std::string> c = proj_legend(cf.figure.panels[2]);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0], "correct (" + std::to_string(correct) + ")");
  EXPECT_EQ(c[1], "wrong (" + std::to_string(wrong) + ")");

  const std::string svg = render_svg(cf.figure);
  for (const std::string& s :
       {legend[0], legend[9], c[0], c[1], legend[10], std::string("confidence"),
        std::string("t-SNE 1"), std::string("correct / wrong")})
    EXPECT_NE(svg.find(">" + s + "<"), std::string::npos) << s;

  // The caption: the image count, the method, the model and the accuracy.
  EXPECT_NE(cf.caption.find("t-SNE projection of vit_s16's features of 300 images"),
            std::string::npos)
      << cf.caption;
  const double acc = 100.0 * double(correct) / double(correct + wrong);
  EXPECT_NE(cf.caption.find("accuracy " + format_number(acc, 3) + " %"), std::string::npos)
      << cf.caption;
  EXPECT_NE(cf.caption.find(std::to_string(unlabelled) + " image(s) without a label"),
            std::string::npos)
      << cf.caption;
}

TEST(ProjectionFigure, ACircleSitsWhereItsCoordinatesSay) {
  // Three points: two at the corners of the data, one in the middle-right, large markers.
  ProjectionPoints pts;
  pts.xy = {0, 0, 10, 5, 7.5f, 1.25f};
  pts.labels = {0, 1, 2};
  pts.method = "PCA";
  pts.x_label = "PC 1 (23.4 %)";
  pts.y_label = "PC 2 (11.0 %)";
  ProjectionFigureOptions o;
  o.marker_pt = 9;
  o.alpha = 1;
  const Figure f = projection_figure(pts, {ProjectionColouring::Label}, "m", o).figure;
  ASSERT_EQ(f.panels.size(), 1u);
  const Panel& p = f.panels[0];
  EXPECT_EQ(p.x.label, "PC 1 (23.4 %)");
  // The axes hold the data with a small margin.
  EXPECT_LT(p.x.min, 0);
  EXPECT_GT(p.x.min, -1);
  EXPECT_GT(p.x.max, 10);
  EXPECT_LT(p.x.max, 11);
  const FigureLayout L = layout_figure(f);
  const Rect& plot = L.panels[0].plot;
  const PointXY q = data_to_points(p, L.panels[0], 7.5, 1.25);
  EXPECT_NEAR(q.x, plot.x + plot.w * (7.5 - p.x.min) / (p.x.max - p.x.min), 1e-9);
  EXPECT_NEAR(q.y, plot.y + plot.h * (1 - (1.25 - p.y.min) / (p.y.max - p.y.min)), 1e-9);
  // The rendered pixel there has the class's colour (tab10 green), and so does no pixel
  // of the picture a marker's width away to the left, inside the axes.
  constexpr double kDpi = 100;
  const RgbaImage img = render_rgba(f, kDpi);
  const auto px = [&](double xp, double yp) {
    const size_t i = (size_t(std::lround(yp * kDpi / 72)) * size_t(img.width) +
                      size_t(std::lround(xp * kDpi / 72))) *
                     4;
    return Color{img.rgba[i] / 255.0, img.rgba[i + 1] / 255.0, img.rgba[i + 2] / 255.0, 1};
  };
  const Color green = tab10_color(2), at = px(q.x, q.y), beside = px(q.x - 9, q.y);
  EXPECT_NEAR(at.r, green.r, 0.02);
  EXPECT_NEAR(at.g, green.g, 0.02);
  EXPECT_NEAR(at.b, green.b, 0.02);
  EXPECT_GT(beside.r + beside.g + beside.b, 2.9) << "white beside the circle";
}

TEST(ProjectionFigure, EqualAxesGiveOneScaleOnBothAxes) {
  ProjectionPoints pts = proj_clusters(200, 5);
  pts.method = "PCA";
  ProjectionFigureOptions o;
  o.equal_axes = true;
  const Figure f =
      projection_figure(pts, {ProjectionColouring::Label, ProjectionColouring::Scalar}, "m", o)
          .figure;
  const FigureLayout L = layout_figure(f);
  for (size_t i = 0; i < f.panels.size(); ++i) {
    const Panel& p = f.panels[i];
    const double sx = (p.x.max - p.x.min) / L.panels[i].plot.w;
    const double sy = (p.y.max - p.y.min) / L.panels[i].plot.h;
    EXPECT_NEAR(sx / sy, 1.0, 0.01) << i;
  }
  // Without the option the clusters (twice as wide as tall) fill the axes instead.
  const Figure g =
      projection_figure(pts, {ProjectionColouring::Label, ProjectionColouring::Scalar}, "m").figure;
  const FigureLayout M = layout_figure(g);
  const double sx = (g.panels[0].x.max - g.panels[0].x.min) / M.panels[0].plot.w;
  const double sy = (g.panels[0].y.max - g.panels[0].y.min) / M.panels[0].plot.h;
  EXPECT_GT(std::abs(sx / sy - 1.0), 0.1);
}

TEST(ProjectionFigure, ManyClassesKeepTwentyColoursAndCallTheRestOther) {
  ProjectionPoints pts = proj_clusters(600, 30);
  // Classes 0..19 twice as frequent: they keep colours.
  for (size_t i = 0; i < 600; ++i)
    if (pts.labels[i] >= 20 && i % 2 == 0) pts.labels[i] = pts.predictions[i] = int(i % 20);
  const Figure f =
      projection_figure(pts, {ProjectionColouring::Label, ProjectionColouring::Prediction}, "m")
          .figure;
  const std::vector<std::string> legend = proj_legend(f.panels[0]);
  ASSERT_EQ(legend.size(), 21u);  // 19 classes, "other classes", "no label"
  EXPECT_EQ(legend[19], "other classes");
  EXPECT_EQ(legend[20], "no label");
  // A legend taller than the default rows makes the figure taller.
  EXPECT_GT(f.height_in, ProjectionFigureOptions{}.row_height_in);
  const FigureLayout L = layout_figure(f);
  EXPECT_GE(L.panels[0].plot.h + 0.5, legend_box(f.panels[0], f.font_pt).h);
}

TEST(ProjectionFigure, RendersToEveryFormat) {
  const CaptionedFigure cf = projection_figure(proj_clusters(400, 10), kProjAll, "vit_s16");
  const auto dir = testing::temp_dir("projection");
  for (FigureFormat fmt : {FigureFormat::Svg, FigureFormat::Pdf, FigureFormat::Png}) {
    const std::string path = (dir / (std::string("p.") + figure_format_name(fmt))).string();
    write_figure(cf.figure, path, fmt, 100);
    const std::string bytes = testing::read_text(path);
    ASSERT_GT(bytes.size(), 1000u) << path;
    if (fmt == FigureFormat::Pdf) {
      EXPECT_EQ(bytes.rfind("%PDF-", 0), 0u);
    }
    if (fmt == FigureFormat::Svg) {
      EXPECT_NE(bytes.find("<svg"), std::string::npos);
    }
    if (fmt == FigureFormat::Png) {
      const RgbaImage img = testing::read_png(path);
      EXPECT_EQ(img.width, int(std::lround(cf.figure.width_in * 100)));
      EXPECT_EQ(img.height, int(std::lround(cf.figure.height_in * 100)));
    }
  }
  std::filesystem::remove_all(dir);
}

// Ten thousand points in every panel, rendered to each format (no timing here: the
// figure's cost is measured in bench/, not asserted).
TEST(ProjectionFigure, TenThousandPointsAreAllDrawn) {
  const ProjectionPoints pts = proj_clusters(10000, 10);
  const Figure f = projection_figure(pts, kProjAll, "m").figure;
  EXPECT_FALSE(render_svg(f).empty());
  EXPECT_FALSE(render_pdf(f).empty());
  EXPECT_FALSE(render_png(f, 200).empty());
  for (const Panel& p : f.panels) {
    size_t drawn = 0;
    for (const LineSeries* s2 : proj_point_series(p)) drawn += s2->x.size();
    EXPECT_EQ(drawn, 10000u) << "every point is drawn";
  }
}

template <typename F>
void expect_projection_error(F&& build, const std::string& message) {
  try {
    build();
    ADD_FAILURE() << "no exception; expected: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
  }
}

TEST(ProjectionFigure, BadInputsSayWhatIsWrong) {
  const ProjectionPoints good = proj_clusters(50, 5);
  const auto build = [](const ProjectionPoints& p, std::vector<ProjectionColouring> c) {
    return [p, c] { projection_figure(p, c, "m"); };
  };
  const std::vector<ProjectionColouring> label = {ProjectionColouring::Label};
  ProjectionPoints p = good;
  p.xy.clear();
  expect_projection_error(build(p, label), "projection figure: no points (xy is empty)");
  p = good;
  p.xy.pop_back();
  expect_projection_error(build(p, label), "xy has 99 values, not N x 2");
  p = good;
  p.labels.pop_back();
  expect_projection_error(build(p, label), "labels has 49 entries for 50 points");
  p = good;
  p.predictions.push_back(0);
  expect_projection_error(build(p, label), "predictions has 51 entries for 50 points");
  p = good;
  p.scalar.resize(10);
  expect_projection_error(build(p, label), "scalar has 10 entries for 50 points");
  p = good;
  p.xy[4] = NAN;
  p.xy[9] = NAN;
  p.xy[11] = INFINITY;
  expect_projection_error(build(p, label), "3 of 50 points have NaN or infinite coordinates");
  p = good;
  p.labels[7] = -2;
  expect_projection_error(build(p, label), "label -2 of point 7 is below -1");
  p = good;
  p.predictions[8] = 5;
  expect_projection_error(build(p, label), "prediction 5 of point 8 has no class name (5 class");
  expect_projection_error(build(good, {}), "no colouring requested");
  expect_projection_error(build(good, {ProjectionColouring::Label, ProjectionColouring::Label}),
                          "the colouring \"label\" is requested twice");
  p = good;
  p.labels.clear();
  expect_projection_error(build(p, {ProjectionColouring::Correctness}),
                          "colouring by correctness needs labels (none given)");
  expect_projection_error(build(p, label), "colouring by label needs labels (none given)");
  p = good;
  p.predictions.clear();
  expect_projection_error(build(p, {ProjectionColouring::Prediction}),
                          "colouring by prediction needs predictions (none given)");
  expect_projection_error(build(p, {ProjectionColouring::Correctness}),
                          "colouring by correctness needs predictions (none given)");
  p = good;
  for (int& v : p.labels) v = -1;
  expect_projection_error(build(p, {ProjectionColouring::Correctness}),
                          "needs an image with both a label and a prediction");
  p = good;
  p.scalar.clear();
  expect_projection_error(build(p, {ProjectionColouring::Scalar}),
                          "colouring by scalar needs scalar values (none given)");
  p = good;
  for (float& v : p.scalar) v = NAN;
  expect_projection_error(build(p, {ProjectionColouring::Scalar}),
                          "the scalar \"confidence\" has no finite value");
  // Without class names, any index is fine and named "class k".
  p = good;
  p.class_names.clear();
  p.labels[0] = 40;
  const Figure f = projection_figure(p, label, "m").figure;
  const std::vector<std::string> legend = proj_legend(f.panels[0]);
  EXPECT_NE(std::find(legend.begin(), legend.end(), "class 40"), legend.end());
}

// Not a check: ATTNLAB_PROJECTION_SAMPLE=path.png writes a sample figure to look at.
TEST(ProjectionFigure, WritesASampleWhenAsked) {
  const char* path = std::getenv("ATTNLAB_PROJECTION_SAMPLE");
  if (!path) GTEST_SKIP() << "set ATTNLAB_PROJECTION_SAMPLE=/path/sample.png to write one";
  ProjectionPoints pts = proj_clusters(2000, 10);
  pts.x_label = "t-SNE 1";
  pts.y_label = "t-SNE 2";
  ProjectionFigureOptions o;
  o.class_counts = std::getenv("ATTNLAB_PROJECTION_COUNTS") != nullptr;
  const CaptionedFigure cf = projection_figure(pts, kProjAll, "vit_s16", o);
  write_figure(cf.figure, path, FigureFormat::Png, 200);
  std::cout << cf.caption << "\n";
}

}  // namespace
}  // namespace attnlab::viz
