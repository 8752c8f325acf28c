// The "plot" paper figures (viz/figures/): built from small synthetic results with the
// names and columns the analysis session produces, each figure has the panels, titles,
// axis labels and series its inputs say (the plotted numbers are the table's numbers),
// no NaN reaches its axes, it renders to a picture that is not blank, and missing inputs
// give a std::invalid_argument that names what is missing.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/analysis/result_key.h"
#include "viz/figure_layout.h"
#include "viz/figures/anchors.h"
#include "viz/figures/castling_mask.h"
#include "viz/figures/cka.h"
#include "viz/figures/entropy.h"
#include "viz/figures/hilo_spectra.h"
#include "viz/figures/locality.h"
#include "viz/figures/map_rank.h"
#include "viz/figures/outliers.h"
#include "viz/figures/rank.h"
#include "viz/figures/series_statistic.h"
#include "viz/render.h"

namespace attnlab::viz {
namespace {

using analysis::Array;
using analysis::Cell;
using analysis::Table;

Table table(std::string name, std::vector<std::string> cols, size_t keys) {
  Table t;
  t.name = std::move(name);
  t.columns = std::move(cols);
  t.key_columns = keys;
  return t;
}

Array array(std::string name, std::vector<int64_t> shape, std::vector<std::string> axes,
            float base) {
  Array a;
  a.name = std::move(name);
  a.shape = std::move(shape);
  a.axes = std::move(axes);
  a.data.resize(size_t(a.numel()));
  for (size_t i = 0; i < a.data.size(); ++i) a.data[i] = base + float(std::sin(double(i) * 0.37));
  return a;
}

// Line series of a panel that carry a legend label.
std::vector<const LineSeries*> labelled(const Panel& p) {
  std::vector<const LineSeries*> out;
  for (const auto& item : p.items)
    if (const auto* s = std::get_if<LineSeries>(&item); s && !s->label.empty()) out.push_back(s);
  return out;
}

// Rendered, the figure has its pixel size and is not one flat colour; axes are finite.
void expect_renders(const Figure& f) {
  for (const auto& p : f.panels) {
    EXPECT_TRUE(std::isfinite(p.x.min) && std::isfinite(p.x.max) && p.x.max > p.x.min) << p.title;
    EXPECT_TRUE(std::isfinite(p.y.min) && std::isfinite(p.y.max) && p.y.max > p.y.min) << p.title;
  }
  const RgbaImage img = render_rgba(f, 100);
  ASSERT_EQ(img.width, int(std::lround(f.width_in * 100)));
  size_t non_white = 0;
  for (size_t i = 0; i < img.pixel_count(); ++i)
    non_white += img.rgba[i * 4] < 200 || img.rgba[i * 4 + 1] < 200 || img.rgba[i * 4 + 2] < 200;
  EXPECT_GT(non_white, img.pixel_count() / 100) << "the figure is (almost) blank";
}

template <typename F>
void expect_invalid(F&& build, const std::string& names) {
  try {
    build();
    ADD_FAILURE() << "no exception; expected one naming " << names;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(names), std::string::npos) << e.what();
  }
}

// rank_layers and rank_sigma as a RALA session makes them (2 layers, kv and output), or
// as sessions wrote them before the precision rule (legacy: no precision or ambiguity).
std::vector<Table> rank_tables(bool with_kv, bool legacy = false) {
  std::vector<std::string> columns = {"layer",
                                      "path",
                                      "mechanism",
                                      "matrix",
                                      "full_mean",
                                      "full_std",
                                      "rank_mean",
                                      "rank_std",
                                      "effective_rank_mean",
                                      "effective_rank_std",
                                      "stable_rank_mean",
                                      "stable_rank_std",
                                      "images"};
  if (!legacy)
    for (const char* c : {"precision_rank", "rank_ambiguous", "precision_ambiguous",
                          "tolerance_rel", "precision_tolerance_rel"})
      for (const char* stat : {"_mean", "_std"}) columns.push_back(std::string(c) + stat);
  Table t = table("rank_layers", columns, 4);
  const auto row = [&](int l, const char* m, double rank, double eff) {
    std::vector<Cell> r = {l, "blocks.0.attn", "rala", m, 64.0, 0.0, rank, 1.2, eff, 0.4, 1.0, 0.0,
                           30};
    // precision rank 40 + l, 1.5; ambiguous shares 1 and 0.5; tolerances 64ε and 16ε.
    if (!legacy)
      for (double v : {40.0 + l, 1.5, 1.0, 0.0, 0.5, 0.0, 7.6e-6, 0.0, 1.9e-6, 0.0}) r.push_back(v);
    t.add_row(r);
  };
  for (int l = 0; l < 2; ++l) {
    if (with_kv) row(l, "kv", 27.5 - l, 1.7);
    row(l, "output", 14.0 + l, 2.7);
  }
  t.caption = "rank statistics; tolerance max(m,n)*eps(dtype)*sigma_max";
  return {t};
}
std::vector<Array> rank_arrays(bool with_kv) {
  std::vector<Array> v;
  for (int l = 0; l < 2; ++l)
    for (std::string m : {"kv", "output"}) {
      if (m == "kv" && !with_kv) continue;
      Array a = array("rank_sigma__" + layer_tag(l) + "__" + m, {2, 8}, {"head", "index"}, 0);
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 8; ++i) a.data[size_t(h * 8 + i)] = float((h + 1) * std::pow(0.5, i));
      v.push_back(a);
    }
  return v;
}

TEST(RankFigure, LinesAreTheTableValues) {
  const CaptionedFigure r = rank_figure(rank_tables(true), rank_arrays(true));
  // rank (float32 rule), rank above float32 precision, effective rank, σ of kv, σ of output
  ASSERT_EQ(r.figure.panels.size(), 5u);
  EXPECT_EQ(r.figure.cols, 3);  // the three rank panels in the first row
  const Panel& rank = r.figure.panels[0];
  EXPECT_EQ(rank.title, "numerical rank (float32 rule)");
  EXPECT_EQ(rank.x.label, "layer");
  const auto lines = labelled(rank);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]->label, "KV buffer");
  EXPECT_EQ(lines[0]->y, (std::vector<double>{27.5, 26.5}));
  EXPECT_EQ(lines[1]->label, "output");
  EXPECT_EQ(lines[1]->y, (std::vector<double>{14.0, 15.0}));
  EXPECT_EQ(lines[1]->x, (std::vector<double>{0, 1}));
  bool full_line = false;
  for (const auto& item : rank.items)
    if (const auto* s = std::get_if<LineSeries>(&item); s && s->dashed)
      full_line = s->y == std::vector<double>{64, 64};
  EXPECT_TRUE(full_line) << "dashed full-rank line at d = 64";
  EXPECT_GT(rank.y.max, 64.0);
  const Panel& precision = r.figure.panels[1];
  EXPECT_EQ(precision.title, "rank above float32 precision");
  const auto precise = labelled(precision);
  ASSERT_EQ(precise.size(), 2u);
  EXPECT_EQ(precise[0]->y, (std::vector<double>{40.0, 41.0}));
  EXPECT_EQ(precision.y.max, rank.y.max);  // one scale for both counts
  EXPECT_TRUE(r.figure.panels[2].y.log);
  const Panel& sigma = r.figure.panels[3];
  EXPECT_TRUE(sigma.y.log);
  EXPECT_NE(sigma.title.find("KV buffer"), std::string::npos);
  const auto layers = labelled(sigma);
  ASSERT_EQ(layers.size(), 2u);
  EXPECT_EQ(layers[0]->label, "layer 0");
  EXPECT_DOUBLE_EQ(layers[0]->y[0], 1.0);    // normalised by σ_max
  EXPECT_DOUBLE_EQ(layers[0]->y[3], 0.125);  // mean over heads of 0.5^3
  // Both rules' tolerances cut the spectrum as dashed lines at their values relative to σ₁.
  std::vector<double> cuts;
  for (const auto& item : sigma.items)
    if (const auto* l = std::get_if<LineSeries>(&item); l && l->dashed) cuts.push_back(l->y[0]);
  EXPECT_EQ(cuts.size(), 2u);
  EXPECT_NE(std::find(cuts.begin(), cuts.end(), 7.6e-6), cuts.end());
  EXPECT_NE(std::find(cuts.begin(), cuts.end(), 1.9e-6), cuts.end());
  EXPECT_LE(sigma.y.min, 1.9e-6);  // the lower cut is on the axis
  EXPECT_NE(r.caption.find("float32 rule as torch.linalg.matrix_rank"), std::string::npos);
  EXPECT_NE(r.caption.find("(tolerance max(m,n)*eps(dtype)*sigma_max)"), std::string::npos)
      << r.caption;
  EXPECT_NE(r.caption.find("100% of head matrices under the float32 rule, 50% above float32 "
                           "precision"),
            std::string::npos)
      << r.caption;
  expect_renders(r.figure);
}

TEST(RankFigure, TablesWithoutThePrecisionRuleStillDraw) {
  const CaptionedFigure r = rank_figure(rank_tables(true, true), rank_arrays(true));
  ASSERT_EQ(r.figure.panels.size(), 4u);  // rank, effective rank, σ of kv, σ of output
  EXPECT_EQ(r.caption.find("precision"), std::string::npos);
  expect_renders(r.figure);
}

TEST(RankFigure, OutputOnlyModels) {
  const CaptionedFigure r = rank_figure(rank_tables(false), rank_arrays(false));
  ASSERT_EQ(r.figure.panels.size(), 4u);
  EXPECT_EQ(labelled(r.figure.panels[0]).size(), 1u);
  expect_renders(r.figure);
}

TEST(RankFigure, MissingInputsAreNamed) {
  expect_invalid([] { rank_figure({}, {}); }, "rank_layers");
  auto t = rank_tables(true);
  t[0].columns[6] = "rank";  // rank_mean renamed
  expect_invalid([&] { rank_figure(t, rank_arrays(true)); }, "rank_mean");
  auto a = rank_arrays(true);
  a.pop_back();
  expect_invalid([&] { rank_figure(rank_tables(true), a); }, "rank_sigma__L01__output");
}

std::vector<Array> spectra_arrays(const std::vector<std::string>& branches) {
  std::vector<Array> v;
  for (int l = 0; l < 2; ++l)
    for (const auto& b : branches) {
      v.push_back(array("spectra__" + layer_tag(l) + "__" + b + "__log_amplitude", {10, 6, 6},
                        {"channel", "fy", "fx"}, b == "lofi" ? -1.0f : 0.0f));
      v.push_back(array("spectra__" + layer_tag(l) + "__" + b + "__radial", {10, 5},
                        {"channel", "ring"}, 1.0f));
    }
  // Channel 7 of every map is the loudest.
  for (auto& a : v)
    if (a.axes.size() == 3)
      for (int i = 0; i < 36; ++i) a.data[size_t(7 * 36 + i)] += 3.0f;
  return v;
}

TEST(HiloSpectra, GridRowsChannelsAndSharedScale) {
  const auto arrays = spectra_arrays({"hifi", "lofi"});
  HiloSpectraOptions o;
  o.channels = 4;
  const CaptionedFigure r = hilo_spectra_grid(arrays, o);
  EXPECT_EQ(r.figure.cols, 4);
  ASSERT_EQ(r.figure.panels.size(), 8u);
  EXPECT_EQ(r.figure.row_labels, (std::vector<std::string>{"Hi-Fi", "Lo-Fi"}));
  bool has7 = false;
  double lo = INFINITY, hi = -INFINITY;
  for (const auto& p : r.figure.panels) {
    EXPECT_TRUE(p.image);
    has7 |= p.title == "ch 7";
    const auto& h = std::get<HeatmapLayer>(p.items.at(0));
    EXPECT_EQ(h.rows, 6);
    for (float v : h.values) lo = std::min(lo, double(v)), hi = std::max(hi, double(v));
  }
  EXPECT_TRUE(has7) << "the highest-energy channel is shown";
  ASSERT_TRUE(r.figure.colorbar.has_value());
  EXPECT_DOUBLE_EQ(r.figure.colorbar->vmin, lo);
  EXPECT_DOUBLE_EQ(r.figure.colorbar->vmax, hi);
  EXPECT_NE(r.caption.find("highest total energy"), std::string::npos);
  expect_renders(r.figure);
  o.pick = ChannelPick::EvenlySpaced;
  const CaptionedFigure even = hilo_spectra_grid(arrays, o);
  EXPECT_EQ(even.figure.panels[1].title, "ch 2");  // 0, 2, 5, 7 of 10
}

TEST(HiloSpectra, OtherModelsHaveOneOutputRow) {
  const CaptionedFigure r = hilo_spectra_grid(spectra_arrays({"output"}));
  EXPECT_EQ(r.figure.rows(), 1);
  EXPECT_EQ(r.figure.row_labels, (std::vector<std::string>{"output"}));
  expect_renders(r.figure);
}

TEST(HiloSpectra, ProfilesAreChannelMeansAndRatioPanel) {
  const auto arrays = spectra_arrays({"hifi", "lofi"});
  Table t = table("spectra_layers",
                  {"layer", "path", "branch", "channels_mean", "channels_std",
                   "high_frequency_ratio_mean", "high_frequency_ratio_std", "images"},
                  3);
  for (int l = 0; l < 2; ++l) {
    t.add_row({l, "b", "hifi", 10.0, 0.0, 0.15 + 0.01 * l, 0.02, 3});
    t.add_row({l, "b", "lofi", 10.0, 0.0, 0.09, 0.03, 3});
  }
  const CaptionedFigure r = hilo_spectra_profiles(arrays, {t});
  ASSERT_EQ(r.figure.panels.size(), 3u);  // layer 0, layer 1, ratio
  const auto lines = labelled(r.figure.panels[0]);
  ASSERT_EQ(lines.size(), 2u);
  const Array& radial = arrays[1];  // L00 hifi radial (10, 5)
  double mean0 = 0;
  for (int c = 0; c < 10; ++c) mean0 += double(radial.data[size_t(c * 5)]) / 10.0;
  EXPECT_NEAR(lines[0]->y[0], mean0, 1e-6);
  EXPECT_DOUBLE_EQ(lines[0]->x[1], 1.0 / 6.0);  // ring 1 of a 6x6 grid
  const auto ratio = labelled(r.figure.panels[2]);
  ASSERT_EQ(ratio.size(), 2u);
  EXPECT_EQ(ratio[0]->y, (std::vector<double>{0.15, 0.16}));
  expect_renders(r.figure);
  Table bad = t;
  bad.columns[5] = "hf";
  expect_invalid([&] { hilo_spectra_profiles(arrays, {bad}); }, "high_frequency_ratio_mean");
  expect_invalid([] { hilo_spectra_profiles({}, {}); }, "radial");
  expect_invalid([&] { hilo_spectra_grid(arrays, HiloSpectraOptions{5}); },
                 "spectra__L05__hifi__log_amplitude");
  auto wrong = arrays;
  wrong[0].axes = {"channel", "y"};
  wrong[0].shape = {10, 36};
  expect_invalid([&] { hilo_spectra_grid(wrong); }, "channel, fy, fx");
}

Table locality_table(double base) {
  Table t = table("locality_heads",
                  {"layer", "path", "mechanism", "grid", "head", "mean_distance_mean",
                   "mean_distance_std", "images"},
                  5);
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 2; ++h) t.add_row({l, "b", "softmax", "14x14", h, base + l + h, 0.1, 30});
  return t;
}

TEST(LocalityFigure, DotsPerHeadAndLayerMeans) {
  const CaptionedFigure r =
      locality_figure({{"softmax", locality_table(1)}, {"rala", locality_table(3)}});
  ASSERT_EQ(r.figure.panels.size(), 1u);
  const Panel& p = r.figure.panels[0];
  EXPECT_EQ(p.x.label, "layer");
  EXPECT_NE(p.y.label.find("patches"), std::string::npos);
  const auto means = labelled(p);
  ASSERT_EQ(means.size(), 2u);
  EXPECT_EQ(means[0]->label, "softmax");
  EXPECT_EQ(means[0]->y, (std::vector<double>{1.5, 2.5, 3.5}));
  const auto& dots = std::get<LineSeries>(p.items[0]);
  EXPECT_EQ(dots.width_pt, 0);
  EXPECT_EQ(dots.y, (std::vector<double>{1, 2, 2, 3, 3, 4}));
  EXPECT_LT(dots.x[0], 0.0);  // models offset within a layer
  EXPECT_NE(r.caption.find("14x14"), std::string::npos);
  expect_renders(r.figure);
  expect_invalid([] { locality_figure({}); }, "no model");
  Table bad = locality_table(1);
  bad.columns[5] = "distance";
  expect_invalid([&] { locality_figure({{"m", bad}}); }, "mean_distance_mean");
}

// A model with signed rows (negative distances) is left out when others remain, and the
// others keep the colours they have in every figure of the same models.
TEST(LocalityFigure, ALeftOutModelKeepsTheOthersColours) {
  Table signed_rows = locality_table(1);
  signed_rows.rows[0][5] = analysis::Cell(-4.0);
  const CaptionedFigure r = locality_figure(
      {{"softmax", locality_table(1)}, {"castling", signed_rows}, {"rala", locality_table(3)}});
  const auto means = labelled(r.figure.panels[0]);
  ASSERT_EQ(means.size(), 2u);
  EXPECT_EQ(means[1]->label, "rala");
  const Color third = cycle_color(2);
  EXPECT_EQ(means[1]->color.r, third.r);
  EXPECT_EQ(means[1]->color.g, third.g);
  EXPECT_EQ(means[1]->color.b, third.b);
  EXPECT_NE(r.caption.find("left out: castling"), std::string::npos) << r.caption;
}

Table entropy_table(double base, double signed_rows) {
  Table t = table("entropy_heads",
                  {"layer", "path", "mechanism", "head", "keys", "normalised_entropy_mean",
                   "normalised_entropy_std", "signed_rows_mean", "signed_rows_std", "images"},
                  5);
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 2; ++h)
      t.add_row({l, "b", "m", h, 197, base + 0.1 * (l + h), 0.01, signed_rows, 0.0, 4});
  return t;
}

TEST(EntropyFigure, NormalisedEntropyPerHeadAndSignedModelsNamed) {
  const CaptionedFigure r =
      entropy_figure({{"softmax", entropy_table(0.5, 0)}, {"castling", entropy_table(0.9, 1)}});
  ASSERT_EQ(r.figure.panels.size(), 1u);
  const Panel& p = r.figure.panels[0];
  EXPECT_EQ(p.x.label, "layer");
  EXPECT_NE(p.y.label.find("ln K"), std::string::npos);
  const auto means = labelled(p);
  ASSERT_EQ(means.size(), 2u);
  EXPECT_EQ(means[0]->label, "softmax");
  ASSERT_EQ(means[0]->y.size(), 3u);
  EXPECT_NEAR(means[0]->y[0], 0.55, 1e-12);  // heads 0.5 and 0.6
  EXPECT_NEAR(means[1]->y[2], 1.15, 1e-12);  // layer 2 of castling: 1.1 and 1.2
  EXPECT_NE(r.caption.find("castling: rows with negative weights"), std::string::npos) << r.caption;
  EXPECT_EQ(r.caption.find("softmax: rows"), std::string::npos) << r.caption;
  expect_renders(r.figure);
  expect_invalid([] { entropy_figure({}); }, "no model");
  Table bad = entropy_table(0.5, 0);
  bad.columns[5] = "entropy";
  expect_invalid([&] { entropy_figure({{"m", bad}}); }, "normalised_entropy_mean");
}

// A map_rank_heads table: 3 layers x 2 heads over 49 tokens; `rank` per head, and a
// lifted rank when `mixing` is named.
Table map_rank_table(const std::string& form, double rank, const std::string& mixing,
                     double lifted) {
  Table t = table("map_rank_heads",
                  {"layer", "path", "mechanism", "head", "form", "mixing", "tokens_mean",
                   "keys_mean", "bound_mean", "rank_mean", "lifted_rank_mean", "images"},
                  6);
  for (int l = 0; l < 3; ++l)
    for (int h = 0; h < 2; ++h)
      t.add_row({l, "b", "m", h, form, mixing, 49.0, 49.0, form == "factored" ? 8.0 : 49.0,
                 rank + h, lifted, 2});
  return t;
}

TEST(MapRankFigure, RankSharesWithLiftedSeriesAndBoundsNamed) {
  const CaptionedFigure r =
      map_rank_figure({{"softmax", map_rank_table("explicit", 48, "", NAN)},
                       {"flatten", map_rank_table("factored", 7, "dwc", 49)}});
  ASSERT_EQ(r.figure.panels.size(), 1u);
  const Panel& p = r.figure.panels[0];
  EXPECT_NE(p.y.label.find("min(N, K)"), std::string::npos);
  const auto means = labelled(p);
  ASSERT_EQ(means.size(), 3u);
  EXPECT_EQ(means[0]->label, "softmax");
  EXPECT_EQ(means[1]->label, "flatten");
  EXPECT_EQ(means[2]->label, "flatten + dwc");
  EXPECT_NEAR(means[0]->y[0], 48.5 / 49, 1e-12);  // heads 48 and 49
  EXPECT_NEAR(means[1]->y[1], 7.5 / 49, 1e-12);
  EXPECT_NEAR(means[2]->y[2], 1.0, 1e-12);
  EXPECT_NE(r.caption.find("flatten ≤ 0.16"), std::string::npos) << r.caption;
  EXPECT_NE(r.caption.find("flatten + dwc (dashed): rank of A + W_c"), std::string::npos)
      << r.caption;
  EXPECT_TRUE(means[2]->dashed);
  EXPECT_FALSE(means[1]->dashed);
  EXPECT_EQ(means[2]->color.r, means[1]->color.r);  // the model's own colour
  expect_renders(r.figure);
  // Many models: the legend moves right of the axes (the layout makes room for it, inside
  // the figure) and the figure grows until every name fits.
  std::vector<std::pair<std::string, Table>> many;
  for (int m = 0; m < 8; ++m)
    many.push_back({"model " + std::to_string(m), map_rank_table("factored", 5 + m, "dwc", 49)});
  const CaptionedFigure crowded = map_rank_figure(many);
  const Panel& cp = crowded.figure.panels[0];
  EXPECT_TRUE(cp.legend_outside);
  EXPECT_FALSE(p.legend_outside);
  const FigureLayout inside = layout_figure(r.figure), outside = layout_figure(crowded.figure);
  const LegendBox legend = legend_box(cp, crowded.figure.font_pt);
  EXPECT_LT(outside.panels[0].plot.w + legend.w, outside.width_pt);
  EXPECT_LT(outside.panels[0].plot.w, inside.panels[0].plot.w);
  EXPECT_GE(outside.height_pt, legend.h);
  EXPECT_GT(crowded.figure.height_in, r.figure.height_in);  // 16 legend rows
  expect_renders(crowded.figure);
  expect_invalid([] { map_rank_figure({}); }, "no model");
  Table bad = map_rank_table("explicit", 10, "", NAN);
  bad.columns[9] = "rank";
  expect_invalid([&] { map_rank_figure({{"m", bad}}); }, "rank_mean");
}

TEST(CastlingMaskFigure, OneLinePerLayerAlongSteps) {
  Table t = table("mask_heads_series",
                  {"checkpoint_index", "checkpoint", "step", "layer", "path", "head",
                   "threshold_mean", "threshold_std", "fraction_mean", "fraction_std", "count_mean",
                   "count_std", "entries_mean", "entries_std", "images"},
                  6);
  const int steps[3] = {0, 90, 180};
  for (int c = 0; c < 3; ++c)
    for (int l = 0; l < 2; ++l) {
      t.add_row(
          {c, "s", steps[c], l, "b", "0", 0.02, 0.0, 0.5, 0.0, 1.0, 0.0, 2.0, 0.0, 3});  // ignored
      t.add_row({c, "s", steps[c], l, "b", "all", 0.02, 0.0, 0.01 * c + 0.001 * l, 0.002, 1.0, 0.0,
                 2.0, 0.0, 3});
    }
  const CaptionedFigure r = castling_mask_figure({t});
  const Panel& p = r.figure.panels.at(0);
  EXPECT_EQ(p.x.label, "training step");
  const auto lines = labelled(p);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]->label, "layer 1");
  EXPECT_EQ(lines[1]->x, (std::vector<double>{0, 90, 180}));
  EXPECT_NEAR(lines[1]->y[2], (0.02 + 0.001) * 100, 1e-9);  // percent
  EXPECT_NE(r.caption.find("0.02"), std::string::npos);
  expect_renders(r.figure);
  CastlingMaskFigureOptions o;
  o.percent = false;
  EXPECT_NEAR(labelled(castling_mask_figure({t}, o).figure.panels[0])[0]->y[1], 0.01, 1e-12);
  expect_invalid([] { castling_mask_figure({}); }, "mask_heads_series");
  Table bad = t;
  bad.columns[8] = "frac";
  expect_invalid([&] { castling_mask_figure({bad}); }, "fraction_mean");
}

RgbaImage grey_image(int side) {
  RgbaImage img;
  img.width = img.height = side;
  img.rgba.assign(size_t(side * side * 4), 255);
  for (int i = 0; i < side * side; ++i) img.rgba[size_t(i * 4)] = uint8_t(i % 256);
  return img;
}

TEST(AnchorFigure, MapsAndTokenShares) {
  std::vector<Array> arrays;
  for (int l = 0; l < 2; ++l) {
    Array hard =
        array("anchors__img7__" + layer_tag(l) + "__hard", {3, 4, 4}, {"head", "y", "x"}, 0);
    for (int s = 0; s < 3; ++s)
      for (int i = 0; i < 16; ++i)
        hard.data[size_t(s * 16 + i)] = float(i < 12 ? 1 : 3);  // 3/4 on anchor 1
    arrays.push_back(hard);
    arrays.push_back(array("anchors__img7__" + layer_tag(l) + "__soft", {2, 16, 6},
                           {"head", "token", "anchor"}, 0));
  }
  Table usage = table("anchors_usage",
                      {"layer", "path", "head", "anchor", "usage_mean", "usage_std", "images"}, 4);
  for (int l = 0; l < 2; ++l)
    for (int h = 0; h < 2; ++h)
      for (int m = 0; m < 6; ++m)
        usage.add_row({l, "b", std::to_string(h), m, 0.1 + 0.02 * h, 0.0, 3});
  const CaptionedFigure r = anchor_figure(arrays, "img7", grey_image(8), {usage});
  ASSERT_EQ(r.figure.panels.size(), 4u);  // two maps, two bar panels
  EXPECT_TRUE(r.figure.panels[0].image);
  EXPECT_EQ(r.figure.panels[1].title, "layer 1");
  const Panel& bars = r.figure.panels[2];
  std::vector<double> heights;
  for (const auto& item : bars.items)
    if (const auto* b = std::get_if<BarSeries>(&item)) heights.push_back(b->height.at(0));
  EXPECT_EQ(heights, (std::vector<double>{0, 0.75, 0, 0.25, 0, 0}));  // 6 anchors (soft axis)
  const auto dots = labelled(bars);
  ASSERT_EQ(dots.size(), 2u);
  EXPECT_NEAR(dots[1]->y[0], 0.11, 1e-12);  // mean over heads of usage_mean
  expect_renders(r.figure);

  AnchorFigureOptions one;
  one.layers = {1};
  one.head = 0;
  const CaptionedFigure single = anchor_figure(arrays, "", grey_image(8), {}, one);
  EXPECT_EQ(single.figure.cols, 2);  // the map beside its bars
  expect_renders(single.figure);

  expect_invalid([&] { anchor_figure(arrays, "other", grey_image(8), {}); },
                 "anchors__other__L<ll>__hard");
  expect_invalid([&] { anchor_figure(arrays, "img7", RgbaImage{}, {}); }, "image is empty");
  AnchorFigureOptions far;
  far.layers = {0, 4};
  expect_invalid([&] { anchor_figure(arrays, "img7", grey_image(8), {}, far); },
                 "anchors__img7__L04__hard");
  far.layers.clear();
  far.head = 5;
  expect_invalid([&] { anchor_figure(arrays, "img7", grey_image(8), {}, far); }, "head 5");
  Table bad = usage;
  bad.columns[4] = "usage";
  expect_invalid([&] { anchor_figure(arrays, "img7", grey_image(8), {bad}); }, "usage_mean");
}

Table outliers_table(double ratio, double mass, double prefix) {
  Table t = table("outliers_layers",
                  {"layer", "path", "mechanism", "factor_mean", "max_over_median_mean",
                   "outlier_mass_mean", "prefix_mass_mean", "outlier_share_mean", "images"},
                  3);
  for (int l = 0; l < 3; ++l)
    t.add_row({l, "b", "m", 10.0, ratio * (l + 1), mass, prefix, 0.01, 2});
  return t;
}

TEST(OutliersFigure, RatiosOnALogScaleBesideTheMassTheyReceive) {
  const CaptionedFigure r = outliers_figure(
      {{"softmax", outliers_table(4, 0.0, 0.1)}, {"linear", outliers_table(9, 0.3, NAN)}});
  ASSERT_EQ(r.figure.panels.size(), 2u);
  const Panel& ratio = r.figure.panels[0];
  const Panel& mass = r.figure.panels[1];
  EXPECT_TRUE(ratio.y.log);
  EXPECT_GE(ratio.y.min, 1.0);
  EXPECT_GE(ratio.y.max, 27.0);  // linear's layer 2
  // Per model one ratio line, then the dashed threshold at 10.
  const auto* threshold = std::get_if<LineSeries>(&ratio.items.back());
  ASSERT_NE(threshold, nullptr);
  EXPECT_TRUE(threshold->dashed);
  EXPECT_EQ(threshold->y, (std::vector<double>{10, 10}));
  // softmax: outlier and prefix mass; linear: no prefix line (NaN).
  ASSERT_EQ(mass.items.size(), 3u);
  EXPECT_TRUE(std::get<LineSeries>(mass.items[1]).dashed);
  EXPECT_NEAR(std::get<LineSeries>(mass.items[2]).y[1], 0.3, 1e-12);
  EXPECT_NE(r.caption.find("above 10× the median"), std::string::npos) << r.caption;
  expect_renders(r.figure);
  expect_invalid([] { outliers_figure({}); }, "no model");
  Table bad = outliers_table(4, 0, 0);
  bad.columns[4] = "ratio";
  expect_invalid([&] { outliers_figure({{"m", bad}}); }, "max_over_median_mean");
}

TEST(OutliersFigure, PositionsOverThePictureOnASharedScale) {
  // The analysis registry declares this shape (app/session/analyses/outliers.cpp); viz's
  // tests do not link it.
  analysis::register_result_key_shape("outliers", {true, true, false, false, true});
  std::vector<Array> arrays;
  for (int l = 0; l < 3; ++l) {
    Array a = array("outliers__img__L0" + std::to_string(l) + "__norm", {4, 4}, {"y", "x"}, 1.0f);
    a.data[5] = 12.0f + float(l);  // one outlier per layer
    arrays.push_back(a);
  }
  arrays.push_back(array("outliers__other__L00__norm", {4, 4}, {"y", "x"}, 50.0f));
  const CaptionedFigure r =
      outlier_positions_figure(arrays, "img", grey_image(8), {outliers_table(4, 0, 0)});
  ASSERT_EQ(r.figure.panels.size(), 3u);
  ASSERT_TRUE(r.figure.colorbar.has_value());
  EXPECT_NEAR(r.figure.colorbar->vmax, 14.0, 1e-6);  // the largest ratio of this image only
  EXPECT_NE(r.figure.panels[2].title.find("1 > 10×"), std::string::npos)
      << r.figure.panels[2].title;
  expect_renders(r.figure);
  expect_invalid([&] { outlier_positions_figure(arrays, "none", grey_image(8), {}); },
                 "outliers__none");
}

TEST(CkaFigure, CkaFromTheMeanHsicOnOneScale) {
  Array h = array("cka__hsic", {3, 3}, {"layer_a", "layer_b"}, 0.0f);
  // Diagonal 4, 9, 0 (a layer with no variance), off-diagonal H_01 = 3: CKA 3 / √(4·9) = 0.5.
  h.data = {4, 3, 1, 3, 9, 0, 1, 0, 0};
  Array layers = array("cka__layers", {3}, {"layer"}, 0.0f);
  layers.data = {2, 5, 7};
  const std::vector<float> cka = cka_of_hsic(h);
  EXPECT_FLOAT_EQ(cka[0], 1.0f);
  EXPECT_FLOAT_EQ(cka[1], 0.5f);
  EXPECT_TRUE(std::isnan(cka[2]));  // with the constant layer
  EXPECT_TRUE(std::isnan(cka[8]));
  const CaptionedFigure r = cka_figure({{"a", h, layers}, {"b", h, layers}});
  ASSERT_EQ(r.figure.panels.size(), 2u);
  ASSERT_TRUE(r.figure.colorbar.has_value());
  EXPECT_EQ(r.figure.colorbar->vmax, 1.0);
  EXPECT_EQ(r.figure.panels[0].x.tick_labels, (std::vector<std::string>{"2", "5", "7"}));
  EXPECT_NE(r.caption.find("unbiased HSIC_1"), std::string::npos);
  expect_renders(r.figure);
  expect_invalid([] { cka_figure({}); }, "no model");
  Array wrong = h;
  wrong.shape = {9};
  expect_invalid([&] { cka_figure({{"a", wrong, layers}}); }, "cka__hsic");
  layers.data.pop_back();
  expect_invalid([&] { cka_figure({{"a", h, layers}}); }, "layer list");
}

// A per-layer statistic over checkpoints: rows come in checkpoint order (here not in step
// order), two heads per layer averaged, one line per layer in step order.
TEST(SeriesStatisticFigure, OneLinePerLayerInStepOrder) {
  Table t =
      table("entropy_heads_series",
            {"checkpoint_index", "checkpoint", "step", "layer", "head", "value_mean", "images"}, 5);
  const int steps[3] = {200, 0, 100};
  for (int k = 0; k < 3; ++k)
    for (int l = 0; l < 2; ++l)
      for (int h = 0; h < 2; ++h)
        t.add_row({k, "c" + std::to_string(k), steps[k], l, h, 0.1 * steps[k] / 100 + l + h, 4});
  const SeriesStatistic stat{"entropy_heads_series", "value_mean", "value", "A value", ""};
  const CaptionedFigure r = series_statistic_figure({t}, stat);
  ASSERT_EQ(r.figure.panels.size(), 1u);
  const auto lines = labelled(r.figure.panels[0]);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]->label, "layer 1");
  EXPECT_EQ(lines[0]->x, (std::vector<double>{0, 100, 200}));
  EXPECT_NEAR(lines[1]->y[2], 0.2 + 1 + 0.5, 1e-12);  // step 200, layer 1, heads 0 and 1
  EXPECT_NE(r.caption.find("A value per layer against the training step"), std::string::npos);
  expect_renders(r.figure);
  // Split by a key column: one line per (layer, head), labelled with both.
  SeriesStatistic split = stat;
  split.split_by = "head";
  const CaptionedFigure split_figure = series_statistic_figure({t}, split);
  const auto split_lines = labelled(split_figure.figure.panels[0]);
  ASSERT_EQ(split_lines.size(), 4u);
  EXPECT_EQ(split_lines[3]->label, "layer 1 1");
  EXPECT_NEAR(split_lines[3]->y[0], 2.0, 1e-12);  // step 0, layer 1, head 1
  expect_invalid([&] { series_statistic_figure({}, stat); }, "entropy_heads_series");
  SeriesStatistic missing = stat;
  missing.column = "other_mean";
  expect_invalid([&] { series_statistic_figure({t}, missing); }, "other_mean");
}

// The series colours: 20 distinct ones (the zoo's 14 models each keep their own), then
// the cycle repeats; negative indices wrap too.
TEST(CycleColor, TwentyDistinctColoursThenTheCycle) {
  const auto same = [](Color a, Color b) { return a.r == b.r && a.g == b.g && a.b == b.b; };
  for (int i = 0; i < 20; ++i)
    for (int j = i + 1; j < 20; ++j) EXPECT_FALSE(same(cycle_color(i), cycle_color(j))) << i << j;
  EXPECT_TRUE(same(cycle_color(20), cycle_color(0)));
  EXPECT_TRUE(same(cycle_color(-1), cycle_color(19)));
}

}  // namespace
}  // namespace attnlab::viz
