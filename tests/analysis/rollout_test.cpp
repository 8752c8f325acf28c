// Attention rollout (core/analysis/rollout): identity attention rolls out to the identity;
// the order of the product (a later layer's map multiplies from the left); the implicit
// single-query path equals the explicit matrix and a hand-built float64 product for every
// mechanism; max fusion and discarding by hand; a hierarchical 8×8 → 4×4 rollout against
// M₂·P·M₁ with P written out; area maps by hand (4×4 → 8×8, 3×3 → 4×4, prefix tokens); and
// the refusals.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "core/analysis/rollout.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using analysis::HeadFusion;
using analysis::RolloutOptions;
using attention::AttentionTrace;
using attention::TokenLayout;
using attention::TraceQueryError;
using Layers = std::vector<const AttentionTrace*>;

// A trace whose attention is given explicitly: (heads, N, N) for one image.
class MatrixTrace : public AttentionTrace {
 public:
  MatrixTrace(const TokenLayout& l, const at::Tensor& per_head) : a_(per_head.to(at::kFloat)) {
    mechanism = "explicit test matrix";
    layout = l;
    batch = 1;
    heads = per_head.size(0);
    head_dim = 1;
    attention::HeadGroup g;
    g.name = "all";
    g.num_heads = heads;
    g.keys = {l.num_prefix(), l.height, l.width, 1};
    g.query_grid_w = l.width;
    g.q = g.k = g.v = at::zeros({1, heads, l.tokens(), 1});
    groups.push_back(g);
  }

 protected:
  at::Tensor compute_rows(int64_t, const attention::HeadGroup&, int64_t h,
                          const at::Tensor& q_rows) const override {
    return a_[h].index_select(0, q_rows);
  }

 private:
  at::Tensor a_;
};

TokenLayout with_prefix(int64_t h, int64_t w, std::vector<std::string> prefix) {
  TokenLayout l = attention::grid_layout(h, w);
  l.prefix = std::move(prefix);
  return l;
}

double relative_max(const at::Tensor& a, const at::Tensor& ref) {
  const at::Tensor r = ref.to(at::kCPU, at::kDouble);
  return max_abs_diff(a, r) / std::max(r.abs().max().item<double>(), 1e-300);
}

// Head-fused map on the tokens in float64; pooled keys spread over their cells by hand.
at::Tensor fused_by_hand(const AttentionTrace& t, HeadFusion f) {
  const TokenLayout& l = t.layout;
  std::vector<at::Tensor> per_head;
  for (int64_t h = 0; h < t.heads; ++h) {
    const at::Tensor m = t.matrix(0, h).to(at::kCPU, at::kDouble);
    const auto& ks = t.group_of(h).keys;
    at::Tensor tok = at::zeros({l.tokens(), l.tokens()}, at::kDouble);
    for (int64_t j = 0; j < l.num_prefix(); ++j) tok.select(1, j).copy_(m.select(1, j));
    for (int64_t y = 0; y < l.height; ++y)
      for (int64_t x = 0; x < l.width; ++x)
        tok.select(1, l.token_at(y, x))
            .copy_(m.select(1, ks.prefix + (y / ks.cell) * ks.key_w + x / ks.cell) /
                   double(ks.cell * ks.cell));
    per_head.push_back(tok);
  }
  const at::Tensor s = at::stack(per_head);
  if (f == HeadFusion::Mean) return s.mean(0);
  return f == HeadFusion::Max ? std::get<0>(s.max(0)) : std::get<0>(s.min(0));
}

// norm(r·Â + (1−r)·I) by hand, with the smallest grid-column entries discarded first.
at::Tensor step_by_hand(const AttentionTrace& t, double r, HeadFusion f, double discard = 0.0) {
  at::Tensor a = fused_by_hand(t, f);
  const int64_t n = a.size(0), p = t.layout.num_prefix();
  const auto drop = static_cast<int64_t>(std::floor(discard * double(n * (n - p))));
  if (drop > 0) {
    const at::Tensor sorted = std::get<0>(a.slice(1, p).flatten().sort());
    const double kth = sorted[drop - 1].item<double>();
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = p; j < n; ++j)
        if (a[i][j].item<double>() <= kth) a[i][j] = 0.0;
  }
  at::Tensor m = r * a + (1 - r) * at::eye(n, at::kDouble);
  return m / m.sum(1, true);
}

std::shared_ptr<const AttentionTrace> rollout_traced(const std::string& mech, const TokenLayout& l,
                                                     uint64_t seed,
                                                     std::map<std::string, double> options = {}) {
  at::manual_seed(seed);
  auto m = make(mech, 32, 2, std::move(options));
  m->eval();
  at::NoGradGuard no_grad;
  return m->forward_traced(random_tokens(1, l.tokens(), 32, seed + 100), l).trace;
}

TEST(Rollout, IdentityAttentionRollsOutToIdentity) {
  const TokenLayout l = with_prefix(4, 5, {"cls"});
  const int64_t n = l.tokens();
  const MatrixTrace id(l, at::eye(n).expand({3, n, n}));
  const Layers layers{&id, &id, &id};
  for (const RolloutOptions o : {RolloutOptions{}, RolloutOptions{HeadFusion::Max, 1.0, 0.0},
                                 RolloutOptions{HeadFusion::Min, 0.3, 0.5},
                                 RolloutOptions{HeadFusion::Mean, 0.7, 0.0, false}}) {
    EXPECT_LE(max_abs_diff(analysis::rollout_matrix(layers, 0, o), at::eye(n)), 1e-7);
    for (int64_t q : {int64_t{0}, int64_t{7}, n - 1}) {
      const auto r = analysis::rollout_query(layers, 0, q, o);
      EXPECT_EQ(r.implicit_path, o.fusion == HeadFusion::Mean && o.discard_ratio == 0.0);
      EXPECT_LE(max_abs_diff(r.weights, at::eye(n)[q]), 1e-7) << "query " << q;
      EXPECT_EQ(r.weights.scalar_type(), at::kFloat);
    }
  }
}

// R = A₂·A₁: with r = 1 and two non-commuting permutations the order is visible.
TEST(Rollout, LaterLayersMultiplyFromTheLeft) {
  const TokenLayout l = attention::grid_layout(1, 3);
  const at::Tensor p1 = at::tensor({0., 1., 0., 1., 0., 0., 0., 0., 1.}).view({1, 3, 3});
  const at::Tensor p2 = at::tensor({1., 0., 0., 0., 0., 1., 0., 1., 0.}).view({1, 3, 3});
  const MatrixTrace first(l, p1), second(l, p2);
  RolloutOptions o;
  o.residual = 1.0;
  const at::Tensor want = at::matmul(p2[0], p1[0]);
  ASSERT_GT(max_abs_diff(want, at::matmul(p1[0], p2[0])), 0.5);
  // Products of 0/1 permutation matrices are exact in any summation order.
  EXPECT_LE(max_abs_diff(analysis::rollout_matrix({&first, &second}, 0, o), want), 0.0);
  for (int64_t q = 0; q < 3; ++q)
    EXPECT_LE(max_abs_diff(analysis::rollout_query({&first, &second}, 0, q, o).weights, want[q]),
              0.0);
}

// The implicit path runs in the traces' float32, the explicit one in float64 from float32
// rows. Castling's rows are signed: at r = 0.9 some rows of r·Â + (1−r)·I sum to < 0.01 here,
// and the renormalisation magnifies float32 rounding to ~5e-6 relative — still within 1e-5.
TEST(Rollout, ImplicitPathEqualsExplicitMatrixForEveryMechanism) {
  double worst = 0.0;
  for (const auto& info : attention::mechanisms()) {
    std::vector<TokenLayout> layouts{attention::grid_layout(6, 4)};
    if (!info.needs_grid) layouts.push_back(with_prefix(4, 5, {"cls", "dist"}));
    if (info.name == "hilo") layouts.push_back(attention::grid_layout(7, 5));
    for (const TokenLayout& l : layouts) {
      std::vector<std::shared_ptr<const AttentionTrace>> keep;
      for (uint64_t s : {11, 12, 13}) keep.push_back(rollout_traced(info.name, l, s));
      const Layers layers{keep[0].get(), keep[1].get(), keep[2].get()};
      for (double r : {0.5, 0.9}) {
        RolloutOptions o;
        o.residual = r;
        const at::Tensor hand = at::matmul(step_by_hand(*keep[2], r, HeadFusion::Mean),
                                           at::matmul(step_by_hand(*keep[1], r, HeadFusion::Mean),
                                                      step_by_hand(*keep[0], r, HeadFusion::Mean)));
        const at::Tensor whole = analysis::rollout_matrix(layers, 0, o);
        const double d_whole = relative_max(whole, hand);
        EXPECT_LE(d_whole, 1e-5) << info.name << " " << l.describe() << " r " << r;
        for (int64_t q : {int64_t{0}, l.tokens() / 2, l.tokens() - 1}) {
          const auto one = analysis::rollout_query(layers, 0, q, o);
          ASSERT_TRUE(one.implicit_path);
          const double d = relative_max(one.weights, whole[q]);
          EXPECT_LE(d, 1e-5) << info.name << " " << l.describe() << " query " << q;
          worst = std::max({worst, d, d_whole});
        }
      }
    }
  }
  std::printf("[rollout] implicit vs explicit vs hand product, worst relative max|delta| = %.3g\n",
              worst);
}

TEST(Rollout, MaxFusionAndDiscardingFollowTheHandDefinition) {
  const TokenLayout l = with_prefix(3, 4, {"cls"});
  auto a = rollout_traced("softmax", l, 21), b = rollout_traced("linear", l, 22);
  const Layers layers{a.get(), b.get()};
  for (const RolloutOptions o :
       {RolloutOptions{HeadFusion::Max, 0.5, 0.0}, RolloutOptions{HeadFusion::Mean, 0.6, 0.3},
        RolloutOptions{HeadFusion::Min, 0.8, 0.5}}) {
    const at::Tensor hand = at::matmul(step_by_hand(*b, o.residual, o.fusion, o.discard_ratio),
                                       step_by_hand(*a, o.residual, o.fusion, o.discard_ratio));
    const double d = relative_max(analysis::rollout_matrix(layers, 0, o), hand);
    std::printf("[rollout] %s discard %.1f: max|delta| vs hand = %.3g\n",
                analysis::head_fusion_name(o.fusion), o.discard_ratio, d);
    EXPECT_LE(d, 1e-5);
    const auto q = analysis::rollout_query(layers, 0, 5, o);
    EXPECT_FALSE(q.implicit_path);
    EXPECT_LE(relative_max(q.weights, hand[5]), 1e-5);
  }
}

// 8×8 then 4×4 (with and without a cls token on both): R = M₂ · P · M₁, P by hand.
TEST(Rollout, HierarchicalStagesMapTokensByArea) {
  for (bool cls : {false, true}) {
    const std::vector<std::string> pre =
        cls ? std::vector<std::string>{"cls"} : std::vector<std::string>{};
    const TokenLayout fine = with_prefix(8, 8, pre), coarse = with_prefix(4, 4, pre);
    auto first = rollout_traced("linear", fine, 31), second = rollout_traced("softmax", coarse, 32);
    const int64_t p = fine.num_prefix();
    at::Tensor pm = at::zeros({coarse.tokens(), fine.tokens()}, at::kDouble);
    if (cls) pm[0][0] = 1.0;
    for (int64_t y = 0; y < 8; ++y)
      for (int64_t x = 0; x < 8; ++x) pm[p + (y / 2) * 4 + x / 2][p + y * 8 + x] = 0.25;
    for (HeadFusion f : {HeadFusion::Mean, HeadFusion::Max}) {
      RolloutOptions o;
      o.fusion = f;
      const at::Tensor hand =
          at::matmul(step_by_hand(*second, 0.5, f), at::matmul(pm, step_by_hand(*first, 0.5, f)));
      const Layers layers{first.get(), second.get()};
      const at::Tensor whole = analysis::rollout_matrix(layers, 0, o);
      ASSERT_EQ(whole.sizes(), (at::IntArrayRef{coarse.tokens(), fine.tokens()}));
      double worst = relative_max(whole, hand);
      for (int64_t q = 0; q < coarse.tokens(); ++q) {
        const auto r = analysis::rollout_query(layers, 0, q, o);
        EXPECT_EQ(r.layout.height, 8);
        worst = std::max(worst, relative_max(r.weights, hand[q]));
      }
      std::printf("[rollout] 8x8 -> 4x4%s %s: max relative |delta| vs M2·P·M1 = %.3g\n",
                  cls ? " +cls" : "", analysis::head_fusion_name(f), worst);
      EXPECT_LE(worst, 1e-5);
    }
  }
}

// Explicit fused maps (gradient-weighted rollout's input): the readout carried back through
// the layers is uᵀ·M2·P·M1 with M = norm(r·Â + (1−r)·I), across a change of grid.
TEST(Rollout, ReadoutOfExplicitMapsIsTheHandProduct) {
  const TokenLayout fine = with_prefix(8, 8, {"cls"}), coarse = with_prefix(4, 4, {"cls"});
  at::manual_seed(5);
  const at::Tensor a1 = at::rand({fine.tokens(), fine.tokens()}, at::kDouble);
  const at::Tensor a2 = at::rand({coarse.tokens(), coarse.tokens()}, at::kDouble);
  auto step = [](const at::Tensor& a) {
    const at::Tensor m = 0.5 * a + 0.5 * at::eye(a.size(0), at::kDouble);
    return m / m.sum(1, true);
  };
  const at::Tensor pm = analysis::area_map(coarse, fine).to(at::kDouble);
  const at::Tensor hand = at::matmul(step(a2), at::matmul(pm, step(a1)));
  const at::Tensor u = at::rand({coarse.tokens()}, at::kDouble);
  const at::Tensor got =
      analysis::rollout_readout({{fine, a1}, {coarse, a2.to(at::kFloat)}}, u, RolloutOptions{});
  ASSERT_EQ(got.sizes(), (at::IntArrayRef{fine.tokens()}));
  EXPECT_LE(relative_max(got, at::matmul(u, hand)), 1e-6);
  EXPECT_THROW(analysis::rollout_readout({{fine, a1}}, u, RolloutOptions{}), std::invalid_argument);
  EXPECT_THROW(analysis::rollout_readout({{coarse, a1}}, u, RolloutOptions{}),
               std::invalid_argument);
}

TEST(AreaMap, FourByFourOntoEightByEight) {
  const at::Tensor p =
      analysis::area_map(attention::grid_layout(4, 4), attention::grid_layout(8, 8));
  ASSERT_EQ(p.sizes(), (at::IntArrayRef{16, 64}));
  at::Tensor want = at::zeros({16, 64});
  for (int64_t y = 0; y < 8; ++y)
    for (int64_t x = 0; x < 8; ++x) want[(y / 2) * 4 + x / 2][y * 8 + x] = 0.25;
  EXPECT_LE(max_abs_diff(p, want), 0.0);  // overlaps of halves: exact binary fractions
}

// 3 cells onto 4 along an axis: [0,1/3) covers 3/4 of fine cell 0 and 1/4 of cell 1, etc.
TEST(AreaMap, NonIntegerRatioThreeByThreeOntoFourByFour) {
  const double axis[3][4] = {{0.75, 0.25, 0, 0}, {0, 0.5, 0.5, 0}, {0, 0, 0.25, 0.75}};
  const at::Tensor p =
      analysis::area_map(attention::grid_layout(3, 3), attention::grid_layout(4, 4));
  ASSERT_EQ(p.sizes(), (at::IntArrayRef{9, 16}));
  for (int64_t y = 0; y < 3; ++y)
    for (int64_t x = 0; x < 3; ++x)
      for (int64_t v = 0; v < 4; ++v)
        for (int64_t u = 0; u < 4; ++u)
          EXPECT_FLOAT_EQ(p[y * 3 + x][v * 4 + u].item<float>(),
                          static_cast<float>(axis[y][v] * axis[x][u]));
  EXPECT_LE(max_abs_diff(p.sum(1), at::ones({9})), 1e-6);
  // A non-square pair, both directions.
  for (const auto& [a, b] : {std::pair{attention::grid_layout(2, 3), attention::grid_layout(5, 7)},
                             std::pair{attention::grid_layout(5, 7), attention::grid_layout(2, 3)}})
    EXPECT_LE(max_abs_diff(analysis::area_map(a, b).sum(1), at::ones({a.tokens()})), 1e-6);
}

TEST(AreaMap, PrefixTokensMapByNameAndEqualLayoutsGiveIdentity) {
  // Whole and quarter cells: exact binary fractions, so exact equality.
  const TokenLayout l = with_prefix(3, 2, {"cls", "dist"});
  EXPECT_LE(max_abs_diff(analysis::area_map(l, l), at::eye(l.tokens())), 0.0);
  const at::Tensor p =
      analysis::area_map(with_prefix(1, 1, {"dist", "cls"}), with_prefix(2, 2, {"cls"}));
  ASSERT_EQ(p.sizes(), (at::IntArrayRef{3, 5}));
  EXPECT_LE(max_abs_diff(p[0], at::zeros({5})), 0.0);  // dist: no such token, dropped
  EXPECT_LE(max_abs_diff(p[1], at::tensor({1.f, 0.f, 0.f, 0.f, 0.f})), 0.0);
  EXPECT_LE(max_abs_diff(p[2], at::tensor({0.f, .25f, .25f, .25f, .25f})), 0.0);
}

TEST(Rollout, RefusalsNameTheProblem) {
  const TokenLayout l = attention::grid_layout(6, 6);
  auto t = rollout_traced("linear", l, 41);
  const Layers layers{t.get(), t.get()};
  RolloutOptions o;
  o.max_tokens = 30;
  // The implicit path forms no N×N map, so the bound does not apply to it.
  EXPECT_TRUE(analysis::rollout_query(layers, 0, 3, o).implicit_path);
  o.fusion = HeadFusion::Max;
  try {
    analysis::rollout_query(layers, 0, 3, o);
    FAIL() << "explicit path above max_tokens accepted";
  } catch (const TraceQueryError& e) {
    EXPECT_NE(std::string(e.what()).find("max_tokens = 30"), std::string::npos) << e.what();
  }
  EXPECT_THROW(analysis::rollout_matrix(layers, 0, o), TraceQueryError);
  EXPECT_THROW(analysis::rollout_query(layers, 0, 36, {}), TraceQueryError);
  EXPECT_THROW(analysis::rollout_query(layers, 1, 0, {}), TraceQueryError);
  EXPECT_THROW(analysis::rollout_query({}, 0, 0, {}), std::invalid_argument);
  EXPECT_THROW(analysis::rollout_query({t.get(), nullptr}, 0, 0, {}), std::invalid_argument);
  EXPECT_THROW(analysis::rollout_matrix(layers, 0, {HeadFusion::Mean, 1.5}), std::invalid_argument);
  EXPECT_THROW(analysis::rollout_matrix(layers, 0, {HeadFusion::Mean, 0.5, 1.0}),
               std::invalid_argument);
}

}  // namespace
}  // namespace attnlab::testing
