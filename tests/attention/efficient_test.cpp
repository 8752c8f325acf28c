// efficient (Efficient attention, Shen et al.): parity with the reference module (out with
// its inner residual, the softmaxed queries and keys, ≤ 1e-5), rows that sum to 1 and whose
// mixing rebuilds the forward (key and value widths differing, a cls token), the O(N)
// products, the inner-residual option and the refusal of channel counts the heads do not
// divide.
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// (B, C, H, W) -> (B, H·W, C) tokens, row-major, and back.
at::Tensor to_tokens(const at::Tensor& image) {
  return image.flatten(2).transpose(1, 2).contiguous();
}
at::Tensor to_image(const at::Tensor& tokens, int64_t h, int64_t w) {
  return tokens.transpose(1, 2).reshape({tokens.size(0), tokens.size(2), h, w});
}

TEST(EfficientAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("efficient_attn");
  const auto expected = parity_expected("efficient_attn");
  // The fixture: in_channels 32, key/value channels 32, 2 heads, the residual inside.
  auto attn = make("efficient", 32, 2, {{"inner_residual", 1}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor image = expected.at("input");  // (1, 32, 8, 6)
  const TokenLayout layout = attention::grid_layout(image.size(2), image.size(3));
  auto [y, trace] = attn->forward_traced(to_tokens(image), layout);
  EXPECT_LE(max_abs_diff(to_image(y, 8, 6), expected.at("out")), 1e-5);
  // ρq(Q), ρk(K) are kept (B, h, N, dk); the fixture has them per head as (dk, N).
  const auto& g = trace->group_of(0);
  EXPECT_LE(max_abs_diff(g.q.transpose(-2, -1), expected.at("phi_q")), 1e-5);
  EXPECT_LE(max_abs_diff(g.k.transpose(-2, -1), expected.at("phi_k")), 1e-5);
  // The context is ρk(K)ᵀV.
  EXPECT_LE(max_abs_diff(trace->internal("efficient.kv"), at::matmul(g.k.transpose(-2, -1), g.v)),
            1e-5);
}

TEST(EfficientAttention, RowsSumToOneAndRebuildTheForward) {
  const int64_t c = 20, heads = 2;
  // dk = 8, dv = 12: keys and values of different widths.
  auto attn = make("efficient", c, heads, {{"key_channels", 16}, {"value_channels", 24}});
  attn->eval();
  TokenLayout layout = attention::grid_layout(4, 5);
  layout.prefix = {"cls"};
  const at::Tensor x = random_tokens(2, layout.tokens(), c);
  auto [y, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->head_dim, 8);
  ASSERT_EQ(trace->group_of(0).v.size(-1), 12);
  auto p = attn->named_parameters();
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<at::Tensor> mixed;
    for (int64_t h = 0; h < heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);  // (N, N), the cls token among the keys
      EXPECT_GE(rows.min().item<double>(), 0.0);
      EXPECT_LE(max_abs_diff(rows.sum(-1), at::ones({layout.tokens()})), 1e-5);
      mixed.push_back(rows_times_v(*trace, b, h));
      // The O(N) products agree with the rows.
      const at::Tensor v = at::randn({layout.tokens(), 3});
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(rows, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(rows.t(), v)), 1e-5);
    }
    // reprojection is a 1×1 conv: a linear map of each token's concatenated heads.
    const at::Tensor rebuilt =
        at::linear(at::cat(mixed, -1), p["reprojection.weight"].flatten(1), p["reprojection.bias"]);
    EXPECT_LE(max_abs_diff(rebuilt, y[b]), 1e-5);
  }
}

TEST(EfficientAttention, InnerResidualAddsTheInput) {
  auto plain = make("efficient", 16, 4);
  auto with_residual = make("efficient", 16, 4, {{"inner_residual", 1}});
  nn::TensorMap state;
  for (const auto& item : plain->named_parameters()) state[item.key()] = item.value().detach();
  load_from(*with_residual, state, "");
  const TokenLayout layout = attention::grid_layout(3, 3);
  const at::Tensor x = random_tokens(1, layout.tokens(), 16);
  at::NoGradGuard no_grad;
  const at::Tensor a = plain->forward(x, layout), b = with_residual->forward(x, layout);
  EXPECT_GT(max_abs_diff(a, b), 0.1);
  EXPECT_LE(max_abs_diff(a + x, b), 1e-5);
}

TEST(EfficientAttention, ChannelCountsTheHeadsDoNotDivideAreRefused) {
  for (const char* option : {"key_channels", "value_channels"}) {
    try {
      make("efficient", 16, 4, {{option, 10}});
      FAIL() << option << " = 10 with 4 heads was accepted";
    } catch (const attention::AttentionError& e) {
      EXPECT_NE(std::string(e.what()).find(option), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("efficient"), std::string::npos) << e.what();
    }
  }
  // Defaults (0) take the layer's dim.
  auto attn = make("efficient", 16, 4);
  EXPECT_EQ(attn->named_parameters()["keys.weight"].sizes(), (at::IntArrayRef{16, 16, 1, 1}));
}

}  // namespace
}  // namespace attnlab::testing
