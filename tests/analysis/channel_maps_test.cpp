// channel_maps (the analysis of layers offering "channel map", XCA's d×d softmax over
// channels): on a DeiT with XCA attention the per-image arrays are each layer's maps and
// the table's statistics match them; with every temperature 0 the maps are uniform (1/d
// everywhere, entropy log d: analytic); a softmax model is skipped with a note; the figure
// has one heat map per layer and head and refuses an image it has no map for.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "app/session/analysis_session.h"
#include "core/attention/capabilities.h"
#include "models/backbone.h"
#include "models/model_config.h"
#include "models/model_registry.h"
#include "tests/support/float_compare.h"
#include "viz/figures/channel_maps.h"
#include "viz/render.h"

namespace attnlab::testing {
namespace {

using session::AnalysisSession;
using session::AnalysisSettings;

// A 2-block DeiT (C 32, 2 heads: d = 16) on a 4×4 grid with a cls token.
std::shared_ptr<models::Backbone> deit_with(const std::string& attention) {
  const models::Json c = {
      {"arch", "vit"}, {"img_size", 32}, {"patch_size", 8},  {"embed_dim", 32},
      {"depth", 2},    {"num_heads", 2}, {"num_classes", 5}, {"attention", attention}};
  at::manual_seed(4);
  auto m = models::make_backbone(c);
  m->eval();
  return m;
}

struct Analysed {
  std::map<std::string, analysis::Array> arrays;
  std::vector<analysis::Table> tables;
  std::vector<std::string> skipped;
  models::ForwardResult result;
};

Analysed analyse(models::Backbone& model) {
  AnalysisSettings s;
  s.analyses = session::parse_analyses("channel_maps");
  Analysed r;
  AnalysisSession session(s, [&](const analysis::Array& a) { r.arrays[a.name] = a; });
  at::NoGradGuard no_grad;
  at::manual_seed(9);
  r.result = model.run(at::randn({1, 3, 32, 32}), s.forward_options());
  session.add("img", r.result);
  r.tables = session.tables();
  r.skipped = session.skipped();
  EXPECT_TRUE(session.warnings().empty());
  return r;
}

const analysis::Table& heads_table(const Analysed& r) {
  for (const auto& t : r.tables)
    if (t.name == "channel_maps_heads") return t;
  throw std::runtime_error("no channel_maps_heads table");
}

TEST(ChannelMaps, ExportTheMapsOfEveryLayerAndTheirStatistics) {
  auto model = deit_with("xca");
  const Analysed r = analyse(*model);
  ASSERT_EQ(r.arrays.size(), 2u);
  const auto& t = heads_table(r);
  ASSERT_EQ(t.rows.size(), 4u);  // 2 layers × 2 heads
  for (int64_t layer = 0; layer < 2; ++layer) {
    const auto& trace = *r.result.traces[size_t(layer)].trace;
    ASSERT_TRUE(trace.offers(attention::capability::kChannelMap));
    const at::Tensor want = trace.internal("xca.attn")[0];  // (h, d, d)
    const std::string name = "channel_maps__img__L0" + std::to_string(layer) + "__map";
    ASSERT_TRUE(r.arrays.count(name)) << name;
    const analysis::Array& a = r.arrays.at(name);
    ASSERT_EQ(a.shape, (std::vector<int64_t>{2, 16, 16}));
    EXPECT_EQ(a.axes, (std::vector<std::string>{"head", "out_channel", "in_channel"}));
    const at::Tensor got = at::from_blob(const_cast<float*>(a.data.data()), {2, 16, 16}).clone();
    EXPECT_LE(max_abs_diff(got, want), 1e-7);  // the same float32 values, copied
    for (int64_t h = 0; h < 2; ++h) {
      const auto& row = t.rows[size_t(layer * 2 + h)];
      EXPECT_EQ(row[t.column("layer")].number(), double(layer));
      EXPECT_EQ(row[t.column("dim")].number(), 16.0);  // a key column
      const at::Tensor m = want[h].to(at::kDouble);
      EXPECT_NEAR(row[t.column("diagonal_mean")].number(), m.diagonal().mean().item<double>(),
                  1e-12);
      EXPECT_NEAR(row[t.column("entropy_mean")].number(),
                  (-(m * m.log()).sum(-1)).mean().item<double>(), 1e-9);
      EXPECT_NEAR(row[t.column("max_weight_mean")].number(), m.max().item<double>(), 1e-12);
    }
  }
}

TEST(ChannelMaps, ZeroTemperatureGivesUniformMaps) {
  auto model = deit_with("xca");
  {
    at::NoGradGuard no_grad;
    for (auto& p : model->named_parameters())
      if (p.key().find("temperature") != std::string::npos) p.value().zero_();
  }
  const Analysed r = analyse(*model);
  const auto& t = heads_table(r);
  ASSERT_EQ(t.rows.size(), 4u);
  // softmax of a zero row: every weight exactly 1/16 (a power of two).
  for (const auto& [name, a] : r.arrays)
    for (float v : a.data) EXPECT_EQ(v, 1.0f / 16.0f) << name;
  for (const auto& row : t.rows) {
    EXPECT_NEAR(row[t.column("diagonal_mean")].number(), 1.0 / 16.0, 1e-12);
    EXPECT_NEAR(row[t.column("entropy_mean")].number(), std::log(16.0), 1e-9);
    EXPECT_NEAR(row[t.column("max_weight_mean")].number(), 1.0 / 16.0, 1e-12);
  }
}

TEST(ChannelMaps, ModelsWithoutChannelMapsAreSkippedWithANote) {
  auto model = deit_with("softmax");
  const Analysed r = analyse(*model);
  EXPECT_TRUE(r.arrays.empty());
  ASSERT_EQ(r.skipped.size(), 1u);
  EXPECT_NE(r.skipped[0].find("channel_maps"), std::string::npos) << r.skipped[0];
}

TEST(ChannelMaps, TheFigureHasAHeatMapPerLayerAndHead) {
  auto model = deit_with("xca");
  const Analysed r = analyse(*model);
  std::vector<analysis::Array> arrays;
  for (const auto& [name, a] : r.arrays) arrays.push_back(a);
  const auto fig = viz::channel_map_figure(arrays, "img");
  EXPECT_EQ(fig.figure.panels.size(), 4u);
  EXPECT_EQ(fig.figure.cols, 2);
  EXPECT_EQ(fig.figure.row_labels, (std::vector<std::string>{"layer 0", "layer 1"}));
  ASSERT_TRUE(fig.figure.colorbar.has_value());
  float top = 0;
  for (const auto& a : arrays)
    for (float v : a.data) top = std::max(top, v);
  EXPECT_EQ(fig.figure.colorbar->vmax, double(top));
  EXPECT_NE(fig.caption.find("d = 16"), std::string::npos) << fig.caption;
  // It draws: the rendered picture is not blank.
  const viz::RgbaImage picture = viz::render_rgba(fig.figure, 100);
  ASSERT_FALSE(picture.empty());
  EXPECT_NE(std::count(picture.rgba.begin(), picture.rgba.end(), uint8_t(255)),
            int64_t(picture.rgba.size()));
  viz::ChannelMapFigureOptions one;
  one.layers = {1};
  EXPECT_EQ(viz::channel_map_figure(arrays, "img", one).figure.panels.size(), 2u);
  EXPECT_THROW(viz::channel_map_figure(arrays, "other"), std::invalid_argument);
  one.layers = {5};
  EXPECT_THROW(viz::channel_map_figure(arrays, "img", one), std::invalid_argument);
  // The registry knows it: what it needs, and its figure kind for the report.
  const session::AnalysisInfo* info = session::find_analysis("channel_maps");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->needs, (std::vector<std::string>{attention::capability::kChannelMap}));
  ASSERT_TRUE(info->tab.has_value());
}

}  // namespace
}  // namespace attnlab::testing
