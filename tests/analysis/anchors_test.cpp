// Anchor assignments (core/analysis/anchors.h): hand-made assignments A with known argmax,
// usage, entropy (uniform row = log M, one-hot row = 0) and coherence; spatial_coherence on
// hand-made grids (checkerboard 0, constant 1, small grids counted by hand); prefix tokens
// kept out of the coherence; and a real anchor mechanism trace with a cls token against
// naive loops over its A.
#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "core/analysis/anchors.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using analysis::anchor_assignment;
using analysis::spatial_coherence;
using attention::TokenLayout;

// A trace holding only what anchor_assignment reads: its layout and "anchor.A".
class HandTrace : public attention::AttentionTrace {
 public:
  HandTrace(const TokenLayout& l, const at::Tensor& a) {
    mechanism = "anchor";
    layout = l;
    batch = a.size(0);
    heads = a.size(1);
    internals["anchor.A"] = a;
  }

 protected:
  at::Tensor compute_rows(int64_t, const attention::HeadGroup&, int64_t,
                          const at::Tensor&) const override {
    throw attention::TraceQueryError("a hand-made trace has no rows");
  }
};

TokenLayout with_cls(int64_t h, int64_t w) {
  TokenLayout l = attention::grid_layout(h, w);
  l.prefix = {"cls"};
  return l;
}

// Share of equal 4-neighbour pairs, counted pair by pair; labels[y·W + x].
double naive_coherence(const std::vector<int64_t>& labels, int64_t h, int64_t w) {
  int64_t same = 0, pairs = 0;
  for (int64_t y = 0; y < h; ++y)
    for (int64_t x = 0; x < w; ++x) {
      const int64_t l = labels[static_cast<size_t>(y * w + x)];
      if (x + 1 < w) ++pairs, same += l == labels[static_cast<size_t>(y * w + x + 1)];
      if (y + 1 < h) ++pairs, same += l == labels[static_cast<size_t>((y + 1) * w + x)];
    }
  return pairs == 0 ? 1.0 : static_cast<double>(same) / static_cast<double>(pairs);
}

TEST(SpatialCoherence, HandMadeGrids) {
  // Checkerboard 4×5: every neighbour differs.
  EXPECT_EQ(spatial_coherence((at::arange(4).unsqueeze(1) + at::arange(5).unsqueeze(0)) % 2), 0.0);
  EXPECT_EQ(spatial_coherence(at::full({3, 6}, 7, at::kLong)), 1.0);
  // [[0, 0], [1, 0]]: pairs (0,0) same, (1,0) no, (0,1) no, (0,0) same -> 2/4.
  EXPECT_DOUBLE_EQ(spatial_coherence(at::tensor({0, 0, 1, 0}, at::kLong).reshape({2, 2})), 0.5);
  // [[1, 1, 2], [1, 2, 2]]: horizontal s d d s, vertical s d s -> 4/7.
  EXPECT_DOUBLE_EQ(spatial_coherence(at::tensor({1, 1, 2, 1, 2, 2}, at::kLong).reshape({2, 3})),
                   4.0 / 7.0);
  EXPECT_DOUBLE_EQ(spatial_coherence(at::tensor({0, 0, 1, 1}, at::kLong).reshape({1, 4})),
                   2.0 / 3.0);
  EXPECT_EQ(spatial_coherence(at::zeros({1, 1}, at::kLong)), 1.0);  // no adjacent pair
  EXPECT_THROW(spatial_coherence(at::zeros({4}, at::kLong)), std::invalid_argument);
  // Chance level: two distinct cells share a label with probability Σ c(c−1) / (n(n−1)).
  EXPECT_DOUBLE_EQ(analysis::shuffled_coherence(at::tensor({0, 0, 1, 1}, at::kLong).reshape({2, 2})),
                   4.0 / 12.0);
  EXPECT_DOUBLE_EQ(analysis::shuffled_coherence(at::full({3, 3}, 5, at::kLong)), 1.0);
  EXPECT_DOUBLE_EQ(analysis::shuffled_coherence(at::arange(6).reshape({2, 3})), 0.0);
}

TEST(AnchorAssignment, HandMadeAssignment) {
  // Image 1: cls + 2×3 grid, 2 heads, 3 anchors; the maxima are distinct in every row.
  const std::vector<std::vector<std::vector<double>>> a1 = {{{.1, .2, .7},
                                                             {.6, .3, .1},
                                                             {.5, .4, .1},
                                                             {.2, .5, .3},
                                                             {.7, .2, .1},
                                                             {.4, .1, .5},
                                                             {.2, .6, .2}},
                                                            {{.3, .3, .4},
                                                             {.1, .1, .8},
                                                             {.2, .1, .7},
                                                             {.3, .2, .5},
                                                             {.1, .3, .6},
                                                             {.25, .05, .7},
                                                             {.6, .3, .1}}};
  at::Tensor a = at::empty({2, 2, 7, 3});
  // Image 0: head 0 uniform rows, head 1 one-hot rows (token i -> anchor i mod 3).
  a[0][0].fill_(1.0 / 3.0);
  a[0][1] = at::one_hot(at::arange(7) % 3, 3).to(at::kFloat);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t i = 0; i < 7; ++i)
      for (int64_t m = 0; m < 3; ++m) a[1][h][i][m] = a1[h][i][m];
  const HandTrace trace(with_cls(2, 3), a);

  const auto r = anchor_assignment(trace, 1);
  EXPECT_TRUE(r.soft.equal(a[1]));
  // argmax by hand; grids [[0,0,1],[0,2,1]] (3/7 equal pairs) and [[2,2,2],[2,2,0]] (5/7).
  EXPECT_TRUE(r.hard.equal(
      at::tensor({2, 0, 0, 1, 0, 2, 1, 2, 2, 2, 2, 2, 2, 0}, at::kLong).reshape({2, 7})));
  EXPECT_DOUBLE_EQ(r.coherence[0].item<double>(), 3.0 / 7.0);
  EXPECT_DOUBLE_EQ(r.coherence[1].item<double>(), 5.0 / 7.0);
  for (int64_t h = 0; h < 2; ++h) {
    for (int64_t m = 0; m < 3; ++m) {
      double column = 0.0;
      for (int64_t i = 0; i < 7; ++i) column += a1[h][i][m];
      EXPECT_NEAR(r.usage[h][m].item<double>(), column / 7.0, 1e-7);
    }
    EXPECT_NEAR(r.usage[h].sum().item<double>(), 1.0, 1e-7);
    for (int64_t i = 0; i < 7; ++i) {
      double entropy = 0.0;
      for (double p : a1[h][i]) entropy -= p * std::log(p);
      EXPECT_NEAR(r.entropy[h][i].item<double>(), entropy, 1e-6);
    }
  }
  // Head mean: rows (.2,.25,.55) (.35,.2,.45) (.35,.25,.4) (.25,.35,.4) (.4,.25,.35)
  // (.325,.075,.6) (.4,.45,.15) -> 2 2 2 2 0 2 1; grid [[2,2,2],[0,2,1]]: 3/7.
  EXPECT_TRUE(r.fused_hard.equal(at::tensor({2, 2, 2, 2, 0, 2, 1}, at::kLong)));
  EXPECT_DOUBLE_EQ(r.fused_coherence, 3.0 / 7.0);
  EXPECT_NEAR(r.fused_usage.sum().item<double>(), 1.0, 1e-7);
  EXPECT_NEAR(r.fused_usage[2].item<double>(), (2.0 + 3.8) / 14.0, 1e-7);

  const auto r0 = anchor_assignment(trace, 0);
  for (int64_t i = 0; i < 7; ++i) {
    EXPECT_NEAR(r0.entropy[0][i].item<double>(), std::log(3.0), 1e-6);  // uniform: log M
    EXPECT_EQ(r0.entropy[1][i].item<double>(), 0.0);                    // one-hot: 0
  }
  EXPECT_TRUE(r0.hard[1].equal(at::arange(7) % 3));
  EXPECT_NEAR(r0.usage[1][0].item<double>(), 3.0 / 7.0, 1e-7);
  EXPECT_NEAR(r0.usage[1][1].item<double>(), 2.0 / 7.0, 1e-7);
  EXPECT_NEAR(r0.usage[0][2].item<double>(), 1.0 / 3.0, 1e-7);

  EXPECT_THROW(anchor_assignment(trace, 2), attention::TraceQueryError);
}

TEST(AnchorAssignment, PrefixTokensAreLeftOutOfTheCoherence) {
  // cls on anchor 1, every grid token on anchor 0: the grid is one region.
  at::Tensor a = at::tensor({0.9f, 0.1f}).repeat({1, 1, 10, 1});
  a[0][0][0] = at::tensor({0.2f, 0.8f});
  const auto r = anchor_assignment(HandTrace(with_cls(3, 3), a), 0);
  EXPECT_EQ(r.hard[0][0].item<int64_t>(), 1);
  EXPECT_EQ(r.coherence[0].item<double>(), 1.0);
  EXPECT_EQ(r.fused_coherence, 1.0);
}

TEST(AnchorAssignment, AnchorMechanismTraceWithClsToken) {
  const TokenLayout layout = with_cls(5, 6);
  auto m = make("anchor", 24, 3, {{"anchors", 4}});
  const auto t = m->forward_traced(random_tokens(2, layout.tokens(), 24, 17), layout).trace;
  const auto r = anchor_assignment(*t, 1);
  const at::Tensor a = t->internal("anchor.A")[1].to(at::kDouble);  // (h, N, M)
  const int64_t n = layout.tokens();
  ASSERT_EQ(r.soft.sizes(), at::IntArrayRef({3, n, 4}));
  EXPECT_TRUE(r.soft.equal(t->internal("anchor.A")[1]));
  // Usage against the mechanism's own Δ_m / N.
  EXPECT_LE(max_abs_diff(r.usage, t->internal("anchor.delta")[1] / static_cast<double>(n)), 1e-6);

  auto argmax_row = [](const at::Tensor& row) {
    int64_t best = 0;
    for (int64_t k = 1; k < row.size(0); ++k)
      if (row[k].item<double>() > row[best].item<double>()) best = k;
    return best;
  };
  const at::Tensor fused = a.mean(0);
  std::vector<int64_t> fused_grid;
  for (int64_t h = 0; h <= 3; ++h) {  // h == 3: the head mean
    std::vector<int64_t> grid;
    for (int64_t i = 0; i < n; ++i) {
      const int64_t label = argmax_row(h < 3 ? a[h][i] : fused[i]);
      EXPECT_EQ((h < 3 ? r.hard[h][i] : r.fused_hard[i]).item<int64_t>(), label) << h << "/" << i;
      if (i >= 1) grid.push_back(label);  // grid token i is cell (i − 1) of the 5×6 grid
    }
    const double want = naive_coherence(grid, 5, 6);
    EXPECT_DOUBLE_EQ(h < 3 ? r.coherence[h].item<double>() : r.fused_coherence, want) << h;
  }
  EXPECT_THROW(
      anchor_assignment(
          *make("softmax", 24, 3)->forward_traced(random_tokens(1, n, 24), layout).trace, 0),
      attention::TraceQueryError);
}

}  // namespace
}  // namespace attnlab::testing
