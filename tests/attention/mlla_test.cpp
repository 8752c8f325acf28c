// mlla (MLLA linear attention): module parity with the reference fixture (out, φq, φk before
// and after RoPE, the LePE term; ≤ 1e-5) and its stored RoPE table against the formula, rows
// that rebuild the forward with the LePE term (signed, the O(N) products, the KV buffer, the
// explicit form), the table's grid rules (computed for another grid; a loaded table that is
// not the formula's used on its own grid and refused elsewhere), and a configuration the
// fixture does not cover (non-square grid, 4 heads, another base) against SPEC_COMPARISON's
// formulas written out here.
#include <cmath>
#include <cstdio>

#include "core/attention/capabilities.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// Parity within 1e-5, the difference printed for the log.
void mlla_expect_parity(const char* what, const at::Tensor& got, const at::Tensor& want) {
  const double diff = max_abs_diff(got, want);
  std::printf("[mlla] %s max|delta| = %.2e\n", what, diff);
  EXPECT_LE(diff, 1e-5) << what;
}

TEST(MllaAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("mlla_attn");
  const auto expected = parity_expected("mlla_attn");
  auto attn = make("mlla", 32, 2, {{"resolution_h", 7}, {"resolution_w", 7}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // (1, 49, 32) on 7×7
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(7, 7));
  mlla_expect_parity("out", y, expected.at("out"));
  mlla_expect_parity("phi_q", trace->internal("mlla.phi_q"), expected.at("phi_q"));
  mlla_expect_parity("phi_k", trace->internal("mlla.phi_k"), expected.at("phi_k"));
  const auto& g = trace->group_of(0);
  mlla_expect_parity("phi_q_rope", g.q, expected.at("phi_q_rope"));
  mlla_expect_parity("phi_k_rope", g.k, expected.at("phi_k_rope"));
  // out.lepe is (B, C, H, W); the trace keeps (B, h, N, d).
  const at::Tensor lepe = attention::merge_heads(trace->internal("mlla.lepe"));
  mlla_expect_parity("out.lepe", lepe.transpose(1, 2).reshape({1, 32, 7, 7}),
                     expected.at("out.lepe"));
  // The reference's stored table is the formula (float32 rounding apart), so attnlab may
  // compute it for other grids.
  auto fresh = make("mlla", 32, 2, {{"resolution_h", 7}, {"resolution_w", 7}});
  EXPECT_LE(max_abs_diff(fresh->named_buffers()["rope.rotations"], weights.at("rope.rotations")),
            1e-6);
  // Without a resolution the module stores no table: the fixture's is unexpected.
  auto bare = make("mlla", 32, 2);
  EXPECT_THROW(load_from(*bare, weights, ""), nn::StateLoadError);
  // ... and computes the same rotations for the layer's grid.
  auto w = weights;
  w.erase("rope.rotations");
  load_from(*bare, w, "");
  EXPECT_LE(max_abs_diff(bare->forward(x, attention::grid_layout(7, 7)), y), 1e-5);
}

// Rows · v plus the LePE term is the forward (no projection); rows are signed; products.
void expect_mlla_rows_rebuild_forward(attention::AttentionMechanism& m, const at::Tensor& x,
                                      const TokenLayout& layout) {
  auto [y, trace] = m.forward_traced(x, layout);
  at::Tensor mixed = trace->internal("mlla.lepe").clone();
  for (int64_t b = 0; b < x.size(0); ++b)
    for (int64_t h = 0; h < trace->heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);
      mixed[b][h] += rows_times_v(*trace, b, h);
      const at::Tensor v = at::randn({layout.tokens(), 3});
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(rows, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)), 1e-5);
    }
  EXPECT_LE(max_abs_diff(attention::merge_heads(mixed), y), 1e-5);
  attention::TraceOptions options;
  options.explicit_attention = true;
  EXPECT_LE(max_abs_diff(m.forward_traced(x, layout, options).output, y), 1e-5);
}

TEST(MllaAttention, RowsAreSignedAndRebuildTheForward) {
  at::manual_seed(3);
  auto attn = make("mlla", 24, 3);
  attn->eval();
  const TokenLayout layout = attention::grid_layout(5, 4);
  expect_mlla_rows_rebuild_forward(*attn, random_tokens(2, 20, 24), layout);
  const auto ranks = attn->forward_traced(random_tokens(1, 20, 24), layout).trace->rank_matrices(0);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].matrices.sizes(), (at::IntArrayRef{3, 8, 8}));
}

// Positive features, but rotated: the same feature at rows 0 and 3 of a 4×1 grid turned by
// 3 rad apart (pair 0's θ_0 = 1) gives a product of cos 3 < 0 times its norm.
TEST(MllaAttention, RopeMakesRowsNegative) {
  auto attn = make("mlla", 8, 1);
  attn->eval();
  {
    at::NoGradGuard no_grad;
    auto p = attn->named_parameters();
    p["qk.weight"].zero_();
    p["qk.bias"].fill_(-5);  // φ = e^-5 on every channel but pair 0
    p["qk.bias"].slice(0, 0, 2).fill_(2);
    p["qk.bias"].slice(0, 8, 10).fill_(2);
  }
  auto [y, trace] = attn->forward_traced(random_tokens(1, 4, 8), attention::grid_layout(4, 1));
  EXPECT_LT(trace->matrix(0, 0)[0][3].item<double>(), 0.0);
  EXPECT_TRUE(trace->offers(attention::capability::kSignedRows));
}

// SPEC_COMPARISON's MLLA written out: angles per token and pair, the complex rotation, and
// the attention as Σ_j (rope(φq_i)·rope(φk_j)) v_j / (N·(φq_i·mean φk + eps)), in float64.
at::Tensor mlla_spec_reference(attention::AttentionMechanism& m, const at::Tensor& x64,
                               int64_t height, int64_t width, int64_t heads, double base) {
  auto p = m.named_parameters();
  const int64_t batch = x64.size(0), n = x64.size(1), c = x64.size(2), d = c / heads;
  const int64_t k_max = c / 4;
  const at::Tensor qk =
      at::linear(x64, p["qk.weight"].to(at::kDouble), p["qk.bias"].to(at::kDouble));
  const at::Tensor fq = at::elu(qk.slice(2, 0, c)) + 1, fk = at::elu(qk.slice(2, c)) + 1;
  at::Tensor angle = at::zeros({n, c / 2}, at::kDouble);
  for (int64_t y = 0; y < height; ++y)
    for (int64_t xx = 0; xx < width; ++xx)
      for (int64_t j = 0; j < c / 2; ++j) {
        const int64_t i = j < k_max ? j : j - k_max;
        angle[y * width + xx][j] = double(j < k_max ? y : xx) * std::pow(base, -double(i) / k_max);
      }
  auto rot = [&](const at::Tensor& t) {
    const at::Tensor a = t.slice(2, 0, c, 2), b = t.slice(2, 1, c, 2);
    const at::Tensor re = a * at::cos(angle) - b * at::sin(angle);
    const at::Tensor im = a * at::sin(angle) + b * at::cos(angle);
    return at::stack({re, im}, -1).reshape({batch, n, c});
  };
  auto heads_of = [&](const at::Tensor& t) {
    return t.reshape({batch, n, heads, d}).permute({0, 2, 1, 3});
  };
  const at::Tensor q = heads_of(rot(fq)), k = heads_of(rot(fk)), v = heads_of(x64);
  const at::Tensor den = at::matmul(heads_of(fq), heads_of(fk).mean(2).unsqueeze(-1)) + 1e-6;
  const at::Tensor attn = at::matmul(q, k.transpose(-2, -1)) / (double(n) * den);
  const at::Tensor out = at::matmul(attn, v).permute({0, 2, 1, 3}).reshape({batch, n, c});
  const at::Tensor image = x64.transpose(1, 2).reshape({batch, c, height, width});
  const at::Tensor lepe = at::conv2d(image, p["lepe.weight"].to(at::kDouble),
                                     p["lepe.bias"].to(at::kDouble), {1, 1}, {1, 1}, {1, 1}, c);
  return out + lepe.flatten(2).transpose(1, 2);
}

TEST(MllaAttention, MatchesTheSpecOnANonSquareGridWithFourHeads) {
  auto attn = make("mlla", 16, 4, {{"rope_base", 100}, {"resolution_h", 6}, {"resolution_w", 6}});
  attn->eval();
  {
    at::NoGradGuard no_grad;
    at::manual_seed(5);
    for (auto& t : attn->named_parameters()) t.value().normal_(0, 0.4);
  }
  const at::Tensor x = random_tokens(2, 15, 16);
  const at::Tensor y = attn->forward(x, attention::grid_layout(5, 3));
  const at::Tensor expected = mlla_spec_reference(*attn, x.to(at::kDouble), 5, 3, 4, 100);
  EXPECT_LE(max_abs_diff(y, expected.to(at::kFloat)), 1e-5);
  expect_mlla_rows_rebuild_forward(*attn, x, attention::grid_layout(5, 3));
}

TEST(MllaAttention, ALoadedTableIsUsedOnItsGridAndNotExtended) {
  auto attn = make("mlla", 16, 2, {{"resolution_h", 4}, {"resolution_w", 4}});
  attn->eval();
  const at::Tensor x = random_tokens(1, 16, 16);
  // The formula's own table extends (and is checked once, before it is edited below).
  EXPECT_NO_THROW(attn->forward(random_tokens(1, 12, 16), attention::grid_layout(4, 3)));
  {
    at::NoGradGuard no_grad;
    auto table = attn->named_buffers()["rope.rotations"];
    table.select(-1, 0).fill_(1);  // no rotation at all
    table.select(-1, 1).fill_(0);
  }
  // With identity rotations, rope(φq)·kv is the unrotated product.
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(4, 4));
  EXPECT_LE(max_abs_diff(trace->group_of(0).q, trace->internal("mlla.phi_q")), 1e-6);
  try {
    attn->forward(random_tokens(1, 12, 16), attention::grid_layout(4, 3));
    FAIL() << "a table that is not the formula's was extended to another grid";
  } catch (const attention::AttentionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("mlla"), std::string::npos) << what;
    EXPECT_NE(what.find("rope.rotations"), std::string::npos) << what;
    EXPECT_NE(what.find("4×3"), std::string::npos) << what;
  }
  EXPECT_THROW(make("mlla", 18, 2), attention::AttentionError);  // C not divisible by 4
  EXPECT_THROW(make("mlla", 16, 2, {{"resolution_h", 4}}), attention::AttentionError);
}

}  // namespace
}  // namespace attnlab::testing
