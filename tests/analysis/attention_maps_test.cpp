// Attention maps (core/analysis/attention_maps): head fusion names, grid-query mapping by
// area, query maps against independent computations — our softmax maps against the
// reference probabilities of deit_mini's block 0 (fixture attn.blocks.0), HiLo maps on
// litv2_mini (Lo-Fi rows recomputed in float64 and spread over their s×s cells by hand),
// prefix-token maps, head fusion by hand, and the all-layers overview.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis/attention_maps.h"
#include "models/backbone.h"
#include "models/checkpoint_loading.h"
#include "models/model_config.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using analysis::GridQuery;
using analysis::HeadFusion;
using attention::AttentionTrace;
using attention::TokenLayout;
using attention::TraceQueryError;

// Runs a parity model on its fixture input with every attention layer traced.
models::ForwardResult traced_fixture_run(const std::string& name) {
  auto loaded =
      models::load_model(models::config_from_file(parity_dir() + "/" + name + ".config.json"),
                         parity_dir() + "/" + name + ".safetensors", "");
  models::ForwardOptions options;
  options.trace_attention = true;
  at::NoGradGuard no_grad;
  return loaded.model->run(parity_expected(name).at("input"), options);
}

const AttentionTrace& layer(const models::ForwardResult& r, const std::string& path) {
  for (const auto& t : r.traces)
    if (t.path == path) return *t.trace;
  ADD_FAILURE() << "no traced layer " << path;
  throw std::runtime_error("no traced layer " + path);
}

TEST(AttentionMaps, HeadFusionNamesRoundTripAndUnknownNamesAreListed) {
  for (HeadFusion f : {HeadFusion::Mean, HeadFusion::Max, HeadFusion::Min})
    EXPECT_EQ(analysis::parse_head_fusion(analysis::head_fusion_name(f)), f);
  try {
    analysis::parse_head_fusion("median");
    FAIL() << "median accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("mean, max, min"), std::string::npos) << e.what();
  }
}

TEST(AttentionMaps, FuseHeadsByHand) {
  const at::Tensor t = at::tensor({1.0, -2.0, 3.0, 4.0, 0.5, -6.0}).view({2, 3});
  EXPECT_LE(max_abs_diff(analysis::fuse_heads(t, HeadFusion::Mean), at::tensor({2.5, -0.75, -1.5})),
            1e-12);
  EXPECT_LE(max_abs_diff(analysis::fuse_heads(t, HeadFusion::Max), at::tensor({4.0, 0.5, 3.0})),
            0.0);
  EXPECT_LE(max_abs_diff(analysis::fuse_heads(t, HeadFusion::Min), at::tensor({1.0, -2.0, -6.0})),
            0.0);
  EXPECT_THROW(analysis::fuse_heads(at::Tensor(), HeadFusion::Mean), std::invalid_argument);
}

TEST(AttentionMaps, GridQueriesMapByTheCellUnderTheCentre) {
  TokenLayout same = attention::grid_layout(14, 14);
  EXPECT_EQ(analysis::token_for({5, 9, 14, 14}, same), 5 * 14 + 9);
  TokenLayout half = attention::grid_layout(7, 7);
  EXPECT_EQ(analysis::token_for({5, 9, 14, 14}, half), 2 * 7 + 4);
  EXPECT_EQ(analysis::token_for({13, 0, 14, 14}, half), 6 * 7 + 0);
  // 3×3 onto 4×4: centres at 1/6, 1/2, 5/6 fall in cells 0, 2, 3.
  TokenLayout four = attention::grid_layout(4, 4);
  EXPECT_EQ(analysis::token_for({0, 1, 3, 3}, four), 0 * 4 + 2);
  EXPECT_EQ(analysis::token_for({2, 2, 3, 3}, four), 3 * 4 + 3);
  // Prefix tokens come first; a non-square 4×6 layer with cls and dist.
  TokenLayout pre = attention::grid_layout(4, 6);
  pre.prefix = {"cls", "dist"};
  EXPECT_EQ(analysis::token_for({7, 3, 8, 12}, pre), 2 + 3 * 6 + 1);
  EXPECT_THROW(analysis::token_for({8, 0, 8, 12}, pre), TraceQueryError);
  EXPECT_THROW(analysis::token_for({0, 0, 0, 12}, pre), std::invalid_argument);
}

// deit_mini block 0 is plain softmax: the fixture holds the reference's probabilities.
TEST(AttentionMaps, SoftmaxMapsEqualDeitMiniBlock0Probabilities) {
  const auto expected = parity_expected("deit_mini");
  const at::Tensor ref = expected.at("attn.blocks.0");  // (B, h, 1+N, 1+N)
  const auto run = traced_fixture_run("deit_mini");
  const AttentionTrace& t = layer(run, "blocks.0.attn");
  ASSERT_EQ(t.layout.prefix, std::vector<std::string>{"cls"});
  const int64_t hh = t.layout.height, ww = t.layout.width, heads = t.heads;
  ASSERT_EQ(ref.size(1), heads);
  ASSERT_EQ(ref.size(2), 1 + hh * ww);
  double worst = 0.0;
  for (int64_t b = 0; b < ref.size(0); ++b) {
    for (int64_t q : {int64_t{0}, int64_t{1}, 1 + hh * ww / 2 + 3, hh * ww}) {
      const auto m = analysis::query_map(t, b, q);
      ASSERT_EQ(m.grid.sizes(), (at::IntArrayRef{heads, hh, ww}));
      ASSERT_EQ(m.prefix.sizes(), (at::IntArrayRef{heads, 1}));
      EXPECT_EQ(m.grid.scalar_type(), at::kFloat);
      EXPECT_TRUE(m.grid.device().is_cpu());
      const at::Tensor row = ref[b].select(1, q);  // (h, 1+N)
      worst = std::max(worst, max_abs_diff(m.prefix, row.slice(1, 0, 1)));
      worst = std::max(worst, max_abs_diff(m.grid, row.slice(1, 1).reshape({heads, hh, ww})));
    }
    const auto cls = analysis::prefix_token_map(t, b, "cls");
    EXPECT_EQ(cls.query, 0);
    const at::Tensor row = ref[b].select(1, 0);
    worst = std::max(worst, max_abs_diff(cls.grid, row.slice(1, 1).reshape({heads, hh, ww})));
  }
  std::printf("[maps] deit_mini block 0 maps vs reference probabilities: max|delta| = %.3g\n",
              worst);
  EXPECT_LE(worst, 1e-5);
}

TEST(AttentionMaps, PrefixTokenMapNamesTheTokensALayerHas) {
  const auto run = traced_fixture_run("deit_mini");
  const AttentionTrace& t = layer(run, "blocks.1.attn");
  try {
    analysis::prefix_token_map(t, 0, "dist");
    FAIL() << "dist accepted";
  } catch (const TraceQueryError& e) {
    EXPECT_NE(std::string(e.what()).find("cls"), std::string::npos) << e.what();
  }
}

// litv2_mini stage 3: head 0 is Hi-Fi (2×2 windows), head 1 Lo-Fi over 2×2-pooled keys.
TEST(AttentionMaps, HiloMapsOnLitv2Mini) {
  const auto run = traced_fixture_run("litv2_mini");
  const AttentionTrace& t = layer(run, "layers.2.blocks.0.attn");
  ASSERT_EQ(t.layout.height, 14);
  const auto& lofi = t.group_of(1);
  ASSERT_EQ(lofi.name, "lofi");
  ASSERT_EQ(lofi.keys.cell, 2);
  const int64_t y0 = 5, x0 = 8, query = y0 * 14 + x0;
  const auto m = analysis::query_map(t, 0, query);
  ASSERT_EQ(m.grid.sizes(), (at::IntArrayRef{2, 14, 14}));
  EXPECT_EQ(m.prefix.size(1), 0);

  // Lo-Fi row recomputed here in float64: softmax over the 7×7 pooled keys.
  const at::Tensor q = lofi.q[0][0][query].to(at::kDouble);
  const at::Tensor k = lofi.k[0][0].to(at::kDouble);
  const at::Tensor p = at::softmax(at::matmul(k, q) / std::sqrt(double(t.head_dim)), 0);
  double lofi_err = 0.0;
  for (int64_t y = 0; y < 14; ++y)
    for (int64_t x = 0; x < 14; ++x) {
      const double want = p[(y / 2) * 7 + x / 2].item<double>() / 4.0;
      lofi_err = std::max(lofi_err, std::abs(m.grid[1][y][x].item<double>() - want));
    }
  const double lofi_sum = std::abs(m.grid[1].sum().item<double>() - 1.0);
  // Hi-Fi: only the query's 2×2 window, equal to the head's row there.
  const at::Tensor hifi_row = t.rows(0, 0, at::full({1}, query, at::kLong))[0];
  double hifi_err = 0.0;
  for (int64_t y = 0; y < 14; ++y)
    for (int64_t x = 0; x < 14; ++x) {
      const bool inside = y / 2 == y0 / 2 && x / 2 == x0 / 2;
      const double v = m.grid[0][y][x].item<double>();
      if (!inside) {
        EXPECT_EQ(v, 0.0) << y << "," << x;
      }
      hifi_err = std::max(hifi_err, std::abs(v - hifi_row[y * 14 + x].item<double>()));
    }
  std::printf(
      "[maps] litv2_mini HiLo: lofi grid vs float64 pooled row max|delta| = %.3g, "
      "|sum-1| = %.3g, hifi max|delta| = %.3g\n",
      lofi_err, lofi_sum, hifi_err);
  EXPECT_LE(lofi_err, 1e-6);  // weights are at most 1/4: tighter than 1e-5 relative
  EXPECT_LE(lofi_sum, 1e-5);
  EXPECT_LE(hifi_err, 0.0);
  EXPECT_LE(std::abs(m.grid[0].sum().item<double>() - 1.0), 1e-5);
}

TEST(AttentionMaps, OverviewMapsOneQueryThroughEveryLayerByArea) {
  const auto run = traced_fixture_run("litv2_mini");
  std::vector<const AttentionTrace*> layers;
  for (const auto& t : run.traces) layers.push_back(t.trace.get());
  ASSERT_EQ(layers.size(), 3u);  // stage 3 (two blocks, 14×14), stage 4 (one block, 7×7)
  const GridQuery g{9, 4, 14, 14};
  const auto all = analysis::query_overview(layers, 0, g);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].query, 9 * 14 + 4);
  EXPECT_EQ(all[2].query, 4 * 7 + 2);
  EXPECT_EQ(all[2].grid.sizes(), (at::IntArrayRef{4, 7, 7}));
  for (size_t l = 0; l < all.size(); ++l) {
    // query_overview calls query_map on the same trace: the same computation, exactly.
    const auto one = analysis::query_map(*layers[l], 0, all[l].query);
    EXPECT_LE(max_abs_diff(all[l].grid, one.grid), 0.0) << l;
  }
  layers.push_back(nullptr);
  EXPECT_THROW(analysis::query_overview(layers, 0, g), std::invalid_argument);
}

TEST(AttentionMaps, QueryMapHasEveryHeadsRowWithPrefixApart) {
  TokenLayout l = attention::grid_layout(3, 5);
  l.prefix = {"cls", "dist"};
  at::manual_seed(2);
  auto m = make("anchor", 32, 4, {{"anchors", 5}});
  m->eval();
  at::NoGradGuard no_grad;
  auto t = m->forward_traced(random_tokens(1, l.tokens(), 32), l).trace;
  const auto qm = analysis::query_map(*t, 0, 9);
  ASSERT_EQ(qm.prefix.sizes(), (at::IntArrayRef{4, 2}));
  for (int64_t h = 0; h < 4; ++h) {
    // One row computed alone and the same row of the whole matrix: other matmul shapes,
    // so other kernels and rounding.
    const at::Tensor full = t->matrix(0, h)[9];
    const double tol = reordering_tolerance(full);
    EXPECT_LE(max_abs_diff(qm.prefix[h], full.slice(0, 0, 2)), tol);
    EXPECT_LE(max_abs_diff(qm.grid[h], full.slice(0, 2).view({3, 5})), tol);
  }
  const auto dist = analysis::prefix_token_map(*t, 0, "dist");
  EXPECT_EQ(dist.query, 1);
  EXPECT_THROW(analysis::query_map(*t, 0, l.tokens()), TraceQueryError);
}

}  // namespace
}  // namespace attnlab::testing
