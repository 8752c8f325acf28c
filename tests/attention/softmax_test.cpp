// softmax: parity with timm's ViT attention (deit_mini block 0) and the row properties.
#include <iostream>

#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TokenLayout deit_layout() {
  TokenLayout l = attention::grid_layout(14, 14);
  l.prefix = {"cls"};
  return l;
}

TEST(SoftmaxAttention, MatchesDeitMiniBlock0AndItsProbabilities) {
  auto w = parity_weights("deit_mini");
  auto e = parity_expected("deit_mini");
  // Block 0's input: cls + patch tokens + position embedding; the attention sees norm1(x).
  at::Tensor x = at::cat({w.at("cls_token"), e.at("out.patch_embed")}, 1) + w.at("pos_embed");
  auto attn = make("softmax", 64, 2);
  load_from(*attn, w, "blocks.0.attn.");
  attn->eval();
  auto [out, trace] = attn->forward_traced(layer_norm(x, w, "blocks.0.norm1", 1e-6), deit_layout());
  EXPECT_EQ(trace->window, 0);  // global attention: no windows

  // The module output itself is not a fixture tensor; the block output is.
  at::Tensor y = x + out;
  y = y + timm_mlp(layer_norm(y, w, "blocks.0.norm2", 1e-6), w, "blocks.0.mlp");
  const double block_diff = max_abs_diff(y, e.at("out.blocks.0"));
  std::cout << "softmax block 0 vs deit_mini out.blocks.0: max |diff| = " << block_diff << "\n";
  EXPECT_LE(block_diff, 1e-5);

  // attn.blocks.0 (B, h, 1+N, 1+N) equals our full implicit matrix, head by head.
  for (int64_t h = 0; h < 2; ++h) {
    const double diff = max_abs_diff(trace->matrix(0, h), e.at("attn.blocks.0")[0][h]);
    std::cout << "softmax implicit matrix vs attn.blocks.0 head " << h << ": max |diff| = " << diff
              << "\n";
    EXPECT_LE(diff, 1e-5);
  }
}

TEST(SoftmaxAttention, OutputIsRowsTimesValuesAndRowsSumToOne) {
  auto attn = make("softmax", 48, 3);
  TokenLayout layout = attention::grid_layout(5, 7);
  layout.prefix = {"cls", "dist"};
  at::Tensor x = random_tokens(2, layout.tokens(), 48);
  auto [out, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->heads, 3);
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<at::Tensor> heads;
    for (int64_t h = 0; h < 3; ++h) {
      heads.push_back(rows_times_v(*trace, b, h));
      at::Tensor sums = trace->matrix(b, h).sum(-1);
      EXPECT_LE(max_abs_diff(sums, at::ones_like(sums)), 1e-5);
    }
    at::Tensor merged = at::cat(heads, -1);  // (N, C), head-major
    const auto params = attn->named_parameters();
    at::Tensor rebuilt = at::linear(merged, params["proj.weight"], params["proj.bias"]);
    EXPECT_LE(max_abs_diff(rebuilt, out[b]), 1e-5);
  }
  // One row equals the same row of the matrix; a row has N keys.
  auto r = trace->row(1, 4, 2);
  EXPECT_EQ(r.weights.size(0), layout.tokens());
  EXPECT_LE(max_abs_diff(r.weights, trace->matrix(1, 2)[4]), 1e-7);
}

TEST(SoftmaxAttention, QkvBiasOptionControlsTheParameter) {
  EXPECT_EQ(make("softmax", 16, 2)->named_parameters().size(), 4u);
  EXPECT_EQ(make("softmax", 16, 2, {{"qkv_bias", 0}})->named_parameters().size(), 3u);
}

}  // namespace
}  // namespace attnlab::testing
