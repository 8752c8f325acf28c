// inline (InLine attention, DeiT form): module parity with the reference fixture (out, q and
// k, the predicted per-image kernels, the result fed to proj; ≤ 1e-5), rows that sum to 1,
// are signed and rebuild the forward with the residual term (the O(N) products, the KV
// buffer, the explicit form), the unused window, and a configuration the fixture does not
// cover (4 heads, a non-square grid, no bias) against SPEC_COMPARISON's formulas written out
// here.
#include <cmath>
#include <cstdio>

#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TokenLayout inline_cls_layout(int64_t height, int64_t width) {
  TokenLayout layout = attention::grid_layout(height, width);
  layout.prefix = {"cls"};
  return layout;
}

// The attention result fed to proj, from the trace: q·kv + (1 − s·q·k̄)·v̄ per head, plus the
// residual term, heads merged.
at::Tensor inline_mixed_from_internals(const attention::AttentionTrace& t) {
  const auto& g = t.group_of(0);
  const double s = 1.0 / std::sqrt(double(t.head_dim));
  const at::Tensor gain = 1.0 - at::matmul(g.q, t.internal("inline.k_mean").unsqueeze(-1)) * s;
  const at::Tensor out =
      at::matmul(g.q, t.internal("inline.kv")) + gain * t.internal("inline.v_mean").unsqueeze(-2);
  return attention::merge_heads(out + t.internal("inline.residual"));
}

// Parity within 1e-5, the difference printed for the log.
void inline_expect_parity(const char* what, const at::Tensor& got, const at::Tensor& want) {
  const double diff = max_abs_diff(got, want);
  std::printf("[inline] %s max|delta| = %.2e\n", what, diff);
  EXPECT_LE(diff, 1e-5) << what;
}

TEST(InlineAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("inline_attn");
  const auto expected = parity_expected("inline_attn");
  auto attn = make("inline", 32, 2, {{"qkv_bias", 1}, {"window", 6}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // (1, 37, 32): cls + 6×6
  auto [y, trace] = attn->forward_traced(x, inline_cls_layout(6, 6));
  inline_expect_parity("out", y, expected.at("out"));
  const auto& g = trace->group_of(0);
  inline_expect_parity("phi_q", g.q, expected.at("phi_q"));
  inline_expect_parity("phi_k", g.k, expected.at("phi_k"));
  inline_expect_parity("res_weight", trace->internal("inline.res_weight"),
                       expected.at("res_weight"));
  inline_expect_parity("in.proj", inline_mixed_from_internals(*trace), expected.at("in.proj"));
  // Without qkv_bias the module has no qkv.bias: the fixture's is unexpected.
  auto bare = make("inline", 32, 2);
  EXPECT_THROW(load_from(*bare, weights, ""), nn::StateLoadError);
}

// Rows sum to 1 and may be negative; rows · v plus the residual, through proj, is the forward.
void expect_inline_rows_rebuild_forward(attention::AttentionMechanism& m, const at::Tensor& x,
                                        const TokenLayout& layout) {
  auto [y, trace] = m.forward_traced(x, layout);
  at::Tensor mixed = trace->internal("inline.residual").clone();
  double lowest = 0;
  for (int64_t b = 0; b < x.size(0); ++b)
    for (int64_t h = 0; h < trace->heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);
      lowest = std::min(lowest, rows.min().item<double>());
      EXPECT_LE(max_abs_diff(rows.sum(1), at::ones({layout.tokens()})), 1e-5);
      mixed[b][h] += rows_times_v(*trace, b, h);
      const at::Tensor v = at::randn({layout.tokens(), 3});
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(rows, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)), 1e-5);
    }
  EXPECT_LT(lowest, 0.0) << "the injective rows have negative entries";
  auto p = m.named_parameters();
  const at::Tensor rebuilt =
      at::linear(attention::merge_heads(mixed), p["proj.weight"], p["proj.bias"]);
  EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
  attention::TraceOptions options;
  options.explicit_attention = true;
  EXPECT_LE(max_abs_diff(m.forward_traced(x, layout, options).output, y), 1e-5);
}

TEST(InlineAttention, RowsSumToOneAreSignedAndRebuildTheForward) {
  at::manual_seed(4);
  auto attn = make("inline", 24, 3, {{"qkv_bias", 1}});
  attn->eval();
  const TokenLayout layout = inline_cls_layout(4, 5);
  expect_inline_rows_rebuild_forward(*attn, random_tokens(2, 21, 24), layout);
  const auto ranks = attn->forward_traced(random_tokens(1, 21, 24), layout).trace->rank_matrices(0);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].matrices.sizes(), (at::IntArrayRef{3, 8, 8}));
  // A pure grid (no class token) runs too: the residual then covers every token.
  expect_inline_rows_rebuild_forward(*attn, random_tokens(1, 20, 24), attention::grid_layout(4, 5));
  // Two prefix tokens (DeiT's cls + dist): both stay out of the residual, in the means.
  TokenLayout two = inline_cls_layout(4, 5);
  two.prefix = {"cls", "dist"};
  expect_inline_rows_rebuild_forward(*attn, random_tokens(1, 22, 24), two);
}

// SPEC_COMPARISON's InLine written out in float64: the implied rows 1/n + (s/n)·q_i·(k_j − k̄)
// times v, and the residual as a block-diagonal (per head) 1×1 MLP on the token mean and a
// 3×3 neighbourhood sum on the grid, written as loops.
at::Tensor inline_spec_reference(attention::AttentionMechanism& m, const at::Tensor& x,
                                 int64_t height, int64_t width, int64_t heads) {
  auto p = m.named_parameters();
  const int64_t batch = x.size(0), n = x.size(1), c = x.size(2), d = c / heads;
  auto f64 = [&](const char* name) { return p[name].to(at::kDouble); };
  const at::Tensor qkv = at::linear(x, f64("qkv.weight"));
  auto heads_of = [&](const at::Tensor& t) {
    return t.reshape({batch, n, heads, d}).permute({0, 2, 1, 3});
  };
  const at::Tensor q = heads_of(qkv.slice(2, 0, c)), k = heads_of(qkv.slice(2, c, 2 * c));
  const at::Tensor v = heads_of(qkv.slice(2, 2 * c));
  const double s = 1.0 / std::sqrt(double(d));
  const at::Tensor a = 1.0 / n + (s / n) * at::matmul(q, (k - k.mean(2, true)).transpose(-2, -1));
  at::Tensor out = at::matmul(a, v).permute({0, 2, 1, 3}).reshape({batch, n, c});
  // Block-diagonal weights: head g's outputs read only head g's inputs.
  const at::Tensor w0 = at::zeros({c, c}, at::kDouble), w2 = at::zeros({9 * c, c}, at::kDouble);
  for (int64_t g = 0; g < heads; ++g) {
    w0.slice(0, g * d, (g + 1) * d).slice(1, g * d, (g + 1) * d) =
        f64("residual.0.weight").slice(0, g * d, (g + 1) * d).squeeze(-1);
    w2.slice(0, g * 9 * d, (g + 1) * 9 * d).slice(1, g * d, (g + 1) * d) =
        f64("residual.2.weight").slice(0, g * 9 * d, (g + 1) * 9 * d).squeeze(-1);
  }
  const at::Tensor hidden = at::gelu(at::linear(x.mean(1), w0, f64("residual.0.bias")));
  const at::Tensor kernels = at::linear(hidden, w2, f64("residual.2.bias")).view({batch, c, 3, 3});
  const at::Tensor vt = qkv.slice(2, 2 * c);  // (B, N, C) head-major
  const int64_t prefix = n - height * width;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t y = 0; y < height; ++y)
      for (int64_t xx = 0; xx < width; ++xx)
        for (int64_t dy = -1; dy <= 1; ++dy)
          for (int64_t dx = -1; dx <= 1; ++dx) {
            const int64_t sy = y + dy, sx = xx + dx;
            if (sy < 0 || sy >= height || sx < 0 || sx >= width) continue;
            out[b][prefix + y * width + xx] +=
                kernels[b].select(1, dy + 1).select(1, dx + 1) * vt[b][prefix + sy * width + sx];
          }
  return at::linear(out, f64("proj.weight"), f64("proj.bias"));
}

TEST(InlineAttention, MatchesTheSpecWithFourHeadsOnANonSquareGrid) {
  auto attn = make("inline", 16, 4);
  attn->eval();
  {
    at::NoGradGuard no_grad;
    at::manual_seed(9);
    for (auto& t : attn->named_parameters()) t.value().normal_(0, 0.4);
  }
  const TokenLayout layout = inline_cls_layout(3, 5);
  const at::Tensor x = random_tokens(2, 16, 16);
  const at::Tensor y = attn->forward(x, layout);
  EXPECT_LE(
      max_abs_diff(y, inline_spec_reference(*attn, x.to(at::kDouble), 3, 5, 4).to(at::kFloat)),
      1e-5);
  // The window is stored, never read.
  auto other = make("inline", 16, 4, {{"window", 3}});
  other->eval();
  {
    at::NoGradGuard no_grad;
    auto mine = attn->named_parameters();
    for (auto& t : other->named_parameters()) t.value().copy_(mine[t.key()]);
  }
  EXPECT_LE(max_abs_diff(other->forward(x, layout), y), 0.0);
}

}  // namespace
}  // namespace attnlab::testing
