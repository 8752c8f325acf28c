// hydra (Hydra attention): module parity with the reference fixture (out, the normalised
// q̂ and k̂, the global vector g = the fixture's "kv"; ≤ 1e-5), the implicit rows as
// rank-1 signed per-feature matrices whose mixing rebuilds the forward, the products A·x
// and Aᵀ·y, prefix tokens, and the model's num_heads not applying (always C heads).
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TEST(HydraAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("hydra_attn");
  const auto expected = parity_expected("hydra_attn");
  auto attn = make("hydra", 32, 32);
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(1, x.size(1)));
  EXPECT_LE(max_abs_diff(y, expected.at("out")), 1e-5);
  // q̂, k̂ are kept per head (B, C, N, 1); the fixture has them as (B, N, C).
  const auto& g = trace->group_of(0);
  EXPECT_LE(max_abs_diff(g.q.squeeze(-1).transpose(1, 2), expected.at("phi_q")), 1e-5);
  EXPECT_LE(max_abs_diff(g.k.squeeze(-1).transpose(1, 2), expected.at("phi_k")), 1e-5);
  EXPECT_LE(max_abs_diff(trace->internal("hydra.kv"), expected.at("kv")), 1e-5);
}

TEST(HydraAttention, RowsAreRankOnePerFeatureAndRebuildTheForward) {
  const int64_t c = 24;
  auto attn = make("hydra", c, 3);  // the model's 3 heads do not apply: Hydra has C
  attn->eval();
  TokenLayout layout = attention::grid_layout(4, 5);
  layout.prefix = {"cls"};
  const at::Tensor x = random_tokens(2, layout.tokens(), c);
  auto [y, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->heads, c);
  auto p = attn->named_parameters();
  // Rebuild out from the rows: merge (rows · v) per feature, then proj.
  at::Tensor mixed = at::zeros({2, layout.tokens(), c});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < c; ++h) {
      const at::Tensor rows = trace->matrix(b, h);  // (N, N)
      // Rank 1: the outer product of q̂[:, h] and k̂[:, h].
      const auto& g = trace->group_of(h);
      const at::Tensor outer = at::matmul(g.q[b][h], g.k[b][h].t());
      EXPECT_LE(max_abs_diff(rows, outer), 1e-6);
      mixed[b].select(1, h).copy_(rows_times_v(*trace, b, h).squeeze(-1));
      // The products agree with the rows (O(N) through q̂, k̂).
      const at::Tensor v = at::randn({layout.tokens(), 3});
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(rows, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)), 1e-5);
    }
  const at::Tensor rebuilt = at::linear(mixed, p["proj.weight"], p["proj.bias"]);
  EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
  // Signed and unnormalised: there is no normalisation to show.
  EXPECT_LT(trace->matrix(0, 0).min().item<double>(), 0.0);
}

}  // namespace
}  // namespace attnlab::testing
