// sra (PVT v1 spatial-reduction attention): module parity with the reference fixture (out,
// the attention probabilities over the reduced keys, the reduced map after its LayerNorm;
// ≤ 1e-5), rows·V rebuilding the output, the floor of a grid not divisible by R, R = 1
// being plain MHSA with no sr/norm parameters, and the refusals.
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TEST(SpatialReductionAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("sra_attn");
  const auto expected = parity_expected("sra_attn");
  auto attn = make("sra", 32, 2, {{"sr_ratio", 2}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(8, 6));
  EXPECT_LE(max_abs_diff(y, expected.at("out")), 1e-5);
  EXPECT_LE(max_abs_diff(trace->internal("sra.reduced"), expected.at("out.norm")), 1e-5);
  // The reference's attention (B, h, N, M) is the trace's rows over the 4×3 reduced keys.
  const auto& g = trace->group_of(0);
  EXPECT_EQ(g.keys.key_h, 4);
  EXPECT_EQ(g.keys.key_w, 3);
  EXPECT_EQ(g.keys.cell, 2);
  for (int64_t h = 0; h < 2; ++h)
    EXPECT_LE(max_abs_diff(trace->matrix(0, h), expected.at("attn")[0][h]), 1e-5) << h;
}

// A 7×5 grid with R = 2: the conv floors to 3×2 keys; the last row and column of tokens
// feed no key. Rows still sum to 1 over the keys, and rows·V rebuilds the output.
TEST(SpatialReductionAttention, RowsRebuildTheOutputOnAGridNotDivisibleByR) {
  const int64_t c = 24, heads = 3;
  auto attn = make("sra", c, heads, {{"sr_ratio", 2}});
  const TokenLayout layout = attention::grid_layout(7, 5);
  const at::Tensor x = random_tokens(2, layout.tokens(), c);
  auto [y, trace] = attn->forward_traced(x, layout);
  EXPECT_EQ(trace->group_of(0).keys.size(), 6);
  auto p = attn->named_parameters();
  at::Tensor mixed = at::zeros({2, heads, layout.tokens(), c / heads});
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);
      EXPECT_LE(max_abs_diff(rows.sum(-1), at::ones({layout.tokens()})), 1e-5);
      mixed[b][h].copy_(rows_times_v(*trace, b, h));
    }
  const at::Tensor merged = mixed.transpose(1, 2).reshape({2, layout.tokens(), c});
  EXPECT_LE(max_abs_diff(at::linear(merged, p["proj.weight"], p["proj.bias"]), y), 1e-5);
  // On tokens, a key's weight is spread over the 2×2 block it reduced; the uncovered last
  // row (tokens 30..34) gets none.
  const auto row = trace->row(0, 12, 0);
  const at::Tensor on_tokens = attention::row_on_tokens(row, layout);
  EXPECT_EQ(on_tokens.slice(0, 30, 35).abs().sum().item<double>(), 0.0);
  EXPECT_NEAR(on_tokens.sum().item<double>(), 1.0, 1e-5);
}

TEST(SpatialReductionAttention, RatioOneIsPlainMultiHeadAttentionWithoutSrOrNorm) {
  const int64_t c = 16, heads = 2;
  auto attn = make("sra", c, heads, {{"sr_ratio", 1}});
  for (const auto& item : attn->named_parameters()) {
    EXPECT_EQ(item.key().rfind("sr.", 0), std::string::npos) << item.key();
    EXPECT_EQ(item.key().rfind("norm.", 0), std::string::npos) << item.key();
  }
  const TokenLayout layout = attention::grid_layout(4, 4);
  const at::Tensor x = random_tokens(1, layout.tokens(), c);
  auto [y, trace] = attn->forward_traced(x, layout);
  // Softmax MHSA over q, [k | v] written out from the parameters.
  auto p = attn->named_parameters();
  const at::Tensor q = at::linear(x, p["q.weight"], p["q.bias"]).view({1, 16, heads, 8});
  const auto kv = at::linear(x, p["kv.weight"], p["kv.bias"]).chunk(2, -1);
  const at::Tensor k = kv[0].view({1, 16, heads, 8}), v = kv[1].view({1, 16, heads, 8});
  const at::Tensor a = at::softmax(at::einsum("bnhd,bmhd->bhnm", {q, k}) / std::sqrt(8.0), -1);
  const at::Tensor o = at::einsum("bhnm,bmhd->bnhd", {a, v}).reshape({1, 16, c});
  EXPECT_LE(max_abs_diff(at::linear(o, p["proj.weight"], p["proj.bias"]), y), 1e-5);
  EXPECT_EQ(trace->group_of(0).keys.size(), 16);
}

TEST(SpatialReductionAttention, RefusesPrefixTokensAndGridsSmallerThanOneCell) {
  auto attn = make("sra", 16, 2, {{"sr_ratio", 4}});
  TokenLayout with_cls = attention::grid_layout(8, 8);
  with_cls.prefix = {"cls"};
  EXPECT_THROW(attn->forward(random_tokens(1, with_cls.tokens(), 16), with_cls),
               attention::AttentionError);
  const TokenLayout tiny = attention::grid_layout(3, 8);
  EXPECT_THROW(attn->forward(random_tokens(1, tiny.tokens(), 16), tiny), attention::AttentionError);
}

}  // namespace
}  // namespace attnlab::testing
