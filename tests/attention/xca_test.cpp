// xca (cross-covariance attention, XCiT): parity with the reference module (out and the
// d×d channel map "attn", ≤ 1e-5), the token-to-token rows being the identity (and the
// products with it), the output rebuilt from the channel map A applied to each token's own
// value, A recomputed by hand from the qkv weights and the temperature, and the channel map
// offered for rank and channel-map analyses.
#include "tests/attention/attention_test_util.h"

#include "core/attention/capabilities.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TEST(CrossCovarianceAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("xca_attn");
  const auto expected = parity_expected("xca_attn");
  auto attn = make("xca", 32, 2, {{"qkv_bias", 1}});  // the fixture's config
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // (1, 48, 32): XCA needs no grid
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(1, x.size(1)));
  EXPECT_LE(max_abs_diff(y, expected.at("out")), 1e-5);
  EXPECT_LE(max_abs_diff(trace->internal("xca.attn"), expected.at("attn")), 1e-5);
  // The same map is what the trace offers as its channel map.
  ASSERT_TRUE(trace->offers(attention::capability::kChannelMap));
  const auto maps = trace->rank_matrices(0);
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].name, "channel_map");
  EXPECT_LE(max_abs_diff(maps[0].matrices, expected.at("attn")[0]), 1e-5);
}

TEST(CrossCovarianceAttention, TokenRowsAreTheIdentity) {
  auto attn = make("xca", 24, 3);
  attn->eval();
  TokenLayout layout = attention::grid_layout(3, 5);
  layout.prefix = {"cls"};
  const int64_t n = layout.tokens();
  auto [y, trace] = attn->forward_traced(random_tokens(2, n, 24), layout);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h) {
      // One-hot rows: exact 0/1 values, so equality with the identity is exact.
      EXPECT_TRUE(at::equal(trace->matrix(b, h), at::eye(n))) << "image " << b << " head " << h;
      const at::Tensor r = trace->row(b, 7, h).weights;
      EXPECT_EQ(r.argmax().item<int64_t>(), 7);
      EXPECT_EQ(r.sum().item<float>(), 1.0f);
      const at::Tensor v = at::randn({n, 4});
      EXPECT_TRUE(at::equal(trace->apply(b, h, v), v));
      EXPECT_TRUE(at::equal(trace->apply_transposed(b, h, v), v));
    }
}

TEST(CrossCovarianceAttention, OutputIsTheChannelMapAppliedToEachTokensValue) {
  const int64_t c = 24, heads = 3, d = c / heads;
  auto attn = make("xca", c, heads, {{"qkv_bias", 1}});
  attn->eval();
  auto p = attn->named_parameters();
  {
    at::NoGradGuard no_grad;  // temperatures other than the initial 1, one per head
    p["temperature"].copy_(at::tensor({0.5f, 1.0f, 2.5f}).view({3, 1, 1}));
  }
  TokenLayout layout = attention::grid_layout(4, 4);
  layout.prefix = {"cls"};
  const int64_t n = layout.tokens();
  const at::Tensor x = random_tokens(2, n, c, 5);
  auto [y, trace] = attn->forward_traced(x, layout);

  // A by hand, in double: per head, channels of q and k as unit vectors over the tokens.
  const at::Tensor qkv =
      at::linear(x.to(at::kDouble), p["qkv.weight"].to(at::kDouble), p["qkv.bias"].to(at::kDouble));
  const auto parts = qkv.view({2, n, 3, heads, d}).permute({2, 0, 3, 4, 1});  // (3, B, h, d, N)
  const at::Tensor q = parts[0] / parts[0].norm(2, -1, true);
  const at::Tensor k = parts[1] / parts[1].norm(2, -1, true);
  const at::Tensor tau = p["temperature"].to(at::kDouble);
  const at::Tensor a = (at::matmul(q, k.transpose(-2, -1)) * tau).softmax(-1);  // (B, h, d, d)
  EXPECT_LE(max_abs_diff(trace->internal("xca.attn"), a), 1e-6);
  EXPECT_LE(max_abs_diff(a.sum(-1), at::ones({2, heads, d})), 1e-6);  // softmax rows

  // out = proj(merge(A·v_i)) with v the trace's values before the map.
  const at::Tensor v = trace->internal("xca.v");  // (B, h, N, d)
  const at::Tensor mapped = at::matmul(v, trace->internal("xca.attn").transpose(-2, -1));
  const at::Tensor rebuilt =
      at::linear(attention::merge_heads(mapped), p["proj.weight"], p["proj.bias"]);
  EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
  // The group's values are the mapped ones, so identity rows · v is the head's output.
  for (int64_t h = 0; h < heads; ++h)
    EXPECT_LE(max_abs_diff(rows_times_v(*trace, 1, h), mapped[1][h]), 1e-6);
  const auto maps = trace->rank_matrices(1);
  ASSERT_EQ(maps.size(), 1u);
  EXPECT_EQ(maps[0].matrices.sizes(), (at::IntArrayRef{heads, d, d}));
}

}  // namespace
}  // namespace attnlab::testing
