// Effective receptive field: the summary's arithmetic on constructed maps (a point, a
// uniform image, a disc), the gradient map of models whose reach is known (window
// attention: exactly zero outside the token's window; global attention: not), and a run
// through the session with the derived tables and the figure.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>

#include "app/session/analysis_session.h"
#include "core/analysis/erf.h"
#include "models/erf_run.h"
#include "models/model_registry.h"
#include "viz/figures/erf.h"

using attnlab::analysis::erf_summary;

namespace {

std::shared_ptr<attnlab::models::Backbone> tiny(attnlab::models::Json config) {
  at::manual_seed(0);
  auto m = attnlab::models::make_backbone(config);
  m->eval();
  return m;
}

// 64×64 pixels, 8×8 patches: an 8×8 token grid, no cls token.
attnlab::models::Json vit_with(const std::string& attention, attnlab::models::Json options) {
  attnlab::models::Json c = {{"arch", "vit"},      {"img_size", 64},        {"patch_size", 8},
                             {"embed_dim", 16},    {"depth", 3},            {"num_heads", 2},
                             {"num_classes", 5},   {"attention", attention}, {"class_token", false}};
  if (!options.is_null()) c["attention_options"] = options;
  return c;
}

}  // namespace

TEST(ErfSummary, APointHoldsEverythingInOnePixelAtRadiusZero) {
  at::Tensor map = at::zeros({9, 9}, at::kDouble);
  map[4][4] = 3.0;
  const auto s = erf_summary(map, 4, 4, {0.2, 0.5, 0.99});
  EXPECT_DOUBLE_EQ(s.total, 3.0);
  for (const auto& a : s.areas) {
    EXPECT_EQ(a.pixels, 1);
    EXPECT_DOUBLE_EQ(a.radius_px, 0);
    EXPECT_NEAR(a.area_share, 1.0 / 81, 1e-15);
  }
  EXPECT_NEAR(s.cumulative.front(), 1.0, 1e-12);
  EXPECT_NEAR(s.profile.front(), 1.0, 1e-12);  // one pixel at radius 0 holds it all
}

TEST(ErfSummary, AUniformMapNeedsThatShareOfThePixels) {
  const at::Tensor map = at::ones({10, 10}, at::kDouble);
  const auto s = erf_summary(map, 4.5, 4.5, {0.2, 0.5, 0.99, 1.0});
  EXPECT_EQ(s.areas[0].pixels, 20);
  EXPECT_EQ(s.areas[1].pixels, 50);
  EXPECT_EQ(s.areas[2].pixels, 99);
  EXPECT_EQ(s.areas[3].pixels, 100);
  EXPECT_NEAR(s.areas[1].side_px, std::sqrt(50.0), 1e-12);
  // The whole image lies within the largest radius; the cumulative share ends at 1.
  EXPECT_NEAR(s.cumulative.back(), 1.0, 1e-12);
  for (size_t r = 1; r < s.cumulative.size(); ++r)
    EXPECT_GE(s.cumulative[r], s.cumulative[r - 1]);
  // Every profile bin of a uniform map holds 1 / 100 per pixel.
  for (const double p : s.profile)
    if (p > 0) {
      EXPECT_NEAR(p, 0.01, 1e-12);
    }
}

TEST(ErfSummary, ADiscIsHeldWithinItsRadius) {
  const int64_t n = 41, c = 20, radius = 7;
  at::Tensor map = at::zeros({n, n}, at::kDouble);
  for (int64_t y = 0; y < n; ++y)
    for (int64_t x = 0; x < n; ++x)
      if (std::lround(std::hypot(double(y - c), double(x - c))) <= radius) map[y][x] = 1.0;
  const auto s = erf_summary(map, c, c, {1.0});
  EXPECT_DOUBLE_EQ(s.areas[0].radius_px, double(radius));
  EXPECT_EQ(s.areas[0].pixels, map.sum().item<int64_t>());
}

TEST(ErfSummary, RefusesMapsWithoutAnAnswer) {
  EXPECT_THROW(erf_summary(at::zeros({4, 4}), 1, 1, {0.5}), std::invalid_argument);
  EXPECT_THROW(erf_summary(-at::ones({4, 4}), 1, 1, {0.5}), std::invalid_argument);
  at::Tensor nan = at::ones({4, 4});
  nan[0][0] = NAN;
  EXPECT_THROW(erf_summary(nan, 1, 1, {0.5}), std::invalid_argument);
  EXPECT_THROW(erf_summary(at::ones({4, 4}), 1, 1, {0.0}), std::invalid_argument);
  EXPECT_THROW(erf_summary(at::ones({4, 4}), 1, 1, {1.5}), std::invalid_argument);
  EXPECT_THROW(erf_summary(at::ones({4}), 1, 1, {0.5}), std::invalid_argument);
}

TEST(ErfSummary, CellCentresSitInTheMiddleOfTheirPixels) {
  EXPECT_DOUBLE_EQ(attnlab::analysis::cell_centre_px(0, 14, 224), 7.5);
  EXPECT_DOUBLE_EQ(attnlab::analysis::cell_centre_px(7, 14, 224), 119.5);
}

TEST(ErfRun, WindowAttentionSeesOnlyItsWindow) {
  // Swin windows of 2×2 tokens, no shift: token (4, 4) mixes only with tokens (4..5, 4..5),
  // whose patches cover pixels [32, 48) in both directions; the MLPs are per token. So the
  // gradient is exactly zero outside (no arithmetic reaches it), and not zero inside.
  auto model = tiny(vit_with("swin", {{"window", 2}, {"shift", 0}}));
  const at::Tensor x = at::randn({1, 3, 64, 64});
  const auto r = attnlab::models::run_erf(*model, x);
  EXPECT_EQ(r.target, "blocks.2");
  EXPECT_EQ(r.token_y, 4);
  EXPECT_EQ(r.token_x, 4);
  EXPECT_DOUBLE_EQ(r.centre_y, 35.5);
  ASSERT_EQ(r.map.sizes(), (at::IntArrayRef{64, 64}));
  at::Tensor outside = r.map.clone();
  outside.slice(0, 32, 48).slice(1, 32, 48).zero_();
  EXPECT_EQ(outside.abs().max().item<double>(), 0.0);
  // Every pixel of the window's four patches reaches the token (the patch embedding mixes
  // all of a patch's pixels), up to an exact zero in a random weight, which does not happen.
  const at::Tensor inside = r.map.slice(0, 32, 48).slice(1, 32, 48);
  EXPECT_GT(inside.min().item<double>(), 0.0);

  // Another token picks another window.
  const auto corner = attnlab::models::run_erf(*model, x, {"", 0, 7});
  at::Tensor rest = corner.map.clone();
  rest.slice(0, 0, 16).slice(1, 48, 64).zero_();
  EXPECT_EQ(rest.abs().max().item<double>(), 0.0);
  EXPECT_THROW(attnlab::models::run_erf(*model, x, {"", 8, 0}), attnlab::models::ModelError);
  EXPECT_THROW(attnlab::models::run_erf(*model, x, {"blocks.9", -1, -1}),
               attnlab::models::ModelError);
}

TEST(ErfRun, GlobalAttentionReachesTheWholeImage) {
  auto model = tiny(vit_with("softmax", nullptr));
  const auto r = attnlab::models::run_erf(*model, at::randn({1, 3, 64, 64}));
  EXPECT_GT(r.map.slice(0, 0, 8).slice(1, 0, 8).sum().item<double>(), 0.0);  // a far corner
  const auto s = erf_summary(r.map, r.centre_y, r.centre_x, {0.99});
  EXPECT_GT(s.areas[0].radius_px, 24.0);  // beyond the token's own neighbourhood
}

TEST(ErfAnalysis, TheSessionAveragesTheMapsAndDerivesTheTablesAndFigure) {
  auto model = tiny(vit_with("swin", {{"window", 2}, {"shift", 0}}));
  attnlab::session::AnalysisSettings settings;
  settings.analyses = {"erf"};
  settings.options.set("erf-percent", {50, 100});
  std::vector<attnlab::analysis::Array> emitted;
  attnlab::session::AnalysisSession session(settings,
                                            [&](const auto& a) { emitted.push_back(a); });
  ASSERT_TRUE(session.explains());
  for (int i = 0; i < 2; ++i) session.explain("img" + std::to_string(i), *model, at::randn({1, 3, 64, 64}));
  EXPECT_TRUE(session.warnings().empty());
  const auto arrays = session.arrays();
  const attnlab::analysis::Array* map = nullptr;
  for (const auto& a : arrays)
    if (a.name == "erf__map") map = &a;
  ASSERT_NE(map, nullptr);
  double total = 0;
  for (const float v : map->data) total += double(v);
  EXPECT_NEAR(total, 1.0, 1e-4);  // float32 storage of shares that sum to 1
  const auto tables = session.tables();
  const attnlab::analysis::Table* erf = nullptr;
  for (const auto& t : tables)
    if (t.name == "erf") erf = &t;
  ASSERT_NE(erf, nullptr);
  ASSERT_EQ(erf->rows.size(), 2u);
  // All of it within the window: 100 % needs at most the window's 16×16 pixels, and the
  // disc holding it reaches the window's far corner (12.5 px from the centre (35.5, 35.5)
  // to pixel 47 on both axes, rounded) but no further.
  EXPECT_LE(erf->rows[1][erf->column("pixels")].number(), 256);
  EXPECT_LE(erf->rows[1][erf->column("radius_px")].number(), 17);
  for (const char* name : {"erf_profile", "erf_images"}) {
    bool found = false;
    for (const auto& t : tables) found |= t.name == name;
    EXPECT_TRUE(found) << name;
  }
  attnlab::viz::ErfModel fm{"tiny", *map, 35.5, 35.5, {{50, 3}, {100, 12}}, {0.1, 0.5, 1.0}};
  const auto fig = attnlab::viz::erf_figure({fm});
  EXPECT_EQ(fig.figure.panels.size(), 2u);
  EXPECT_THROW(attnlab::viz::erf_figure({}), std::invalid_argument);
}
