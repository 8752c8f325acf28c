// rala: parity with RAVLT's GateLinearAttentionNoSilu (ravlt_mini stage 1, block 0), the
// implicit rows, the token weights and the KV buffers of the rank analysis.
#include <iostream>
#include <string>
#include <vector>

#include "core/attention/rope.h"
#include "tests/attention/ravlt_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TEST(RalaAttention, MatchesRavltMiniStage1Block0) {
  auto w = parity_weights("ravlt_mini");
  auto e = parity_expected("ravlt_mini");
  auto attn = make("rala", 64, 1);
  load_from(*attn, w, "layers.0.blocks.0.attn.");
  attn->eval();
  const at::Tensor x = ravlt_block0_input(e.at("out.patch_embed"), w, 0);
  const TokenLayout layout = attention::grid_layout(56, 56);
  auto [out, trace] = attn->forward_traced(x, layout);
  const at::Tensor expected = e.at("out.layers.0.blocks.0.attn");  // (1, 64, 56, 56)
  const double diff = max_abs_diff(out.transpose(1, 2).reshape({1, 64, 56, 56}), expected);
  std::cout << "rala vs ravlt_mini layers.0.blocks.0.attn: max |diff| = " << diff << "\n";
  EXPECT_LE(diff, 1e-5);
  // The untraced path computes the same thing; the gated features feed proj.
  EXPECT_LE(max_abs_diff(attn->forward(x, layout), out), reordering_tolerance(out));
  EXPECT_EQ(trace->internal("rala.y").sizes(), (std::vector<int64_t>{1, 1, 3136, 64}));
}

TEST(RalaAttention, OutputIsProjOfRowsTimesValuesPlusLepeTimesGateOnA5x7Grid) {
  auto attn = make("rala", 32, 2);
  const TokenLayout layout = attention::grid_layout(5, 7);
  const at::Tensor x = random_tokens(2, 35, 32);
  auto [out, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->heads, 2);
  for (int64_t b = 0; b < 2; ++b) {
    const double diff = max_abs_diff(rebuild_ravlt_output(*trace, *attn, b, "rala"), out[b]);
    std::cout << "rala rows-rebuilt output, image " << b << ": max |diff| = " << diff << "\n";
    EXPECT_LE(diff, 1e-5);
  }
  // y is (rows·v) + lepe, head by head (the gated features are y ⊙ o).
  const at::Tensor y = trace->internal("rala.y");
  EXPECT_LE(max_abs_diff(y[1][0], rows_times_v(*trace, 1, 0) + trace->internal("rala.lepe")[1][0]),
            1e-5);
  // One row equals the matrix row; it has N keys.
  auto r = trace->row(1, 12, 1);
  EXPECT_EQ(r.weights.size(0), 35);
  EXPECT_LE(max_abs_diff(r.weights, trace->matrix(1, 1)[12]), 1e-7);
}

TEST(RalaAttention, RowsFollowTheSpecFormulaFromStoredFeatures) {
  auto attn = make("rala", 16, 1);
  const TokenLayout layout = attention::grid_layout(3, 4);
  auto [out, trace] = attn->forward_traced(random_tokens(1, 12, 16, 3), layout);
  const auto& g = trace->group_of(0);
  const at::Tensor q = g.q[0][0], k = g.k[0][0], wt = trace->internal("rala.w")[0][0];
  // R(κq), R(κk) rebuilt here from the stored κ features and the 3×4 grid's tables.
  const auto rope = attention::rope_tables(3, 4, 16, q.options());
  const at::Tensor qr = attention::apply_rope(q, rope);
  const at::Tensor kr = attention::apply_rope(k, rope);
  // κ features are positive; the trace holds them before reweighting and rotation.
  EXPECT_GT(q.min().item<double>(), 0.0);
  EXPECT_GT(k.min().item<double>(), 0.0);
  const at::Tensor m = trace->matrix(0, 0);
  for (int64_t i : {0, 5, 11}) {
    for (int64_t j : {0, 7, 11}) {
      const double num = wt[j].item<double>() * qr[i].dot(kr[j]).item<double>();
      const double den = q[i].dot((wt.unsqueeze(1) * k).sum(0)).item<double>() + 1e-6;
      EXPECT_NEAR(m[i][j].item<double>(), num / den, 1e-6) << "i " << i << " j " << j;
    }
  }
}

TEST(RalaAttention, TokenWeightsAlphaSumToTokenCountPerHead) {
  auto attn = make("rala", 32, 2);
  const TokenLayout layout = attention::grid_layout(6, 4);
  auto [out, trace] = attn->forward_traced(random_tokens(3, 24, 32), layout);
  const at::Tensor alpha = trace->internal("rala.w") * 24.0;  // (B, h, L)
  ASSERT_EQ(alpha.sizes(), (std::vector<int64_t>{3, 2, 24}));
  EXPECT_GE(alpha.min().item<double>(), 0.0);
  const at::Tensor sums = alpha.sum(-1);
  EXPECT_LE(max_abs_diff(sums, at::full_like(sums, 24.0)), 1e-4);
}

TEST(RalaAttention, KvBuffersEqualDirectSumsOfOuterProducts) {
  auto attn = make("rala", 16, 2);
  const TokenLayout layout = attention::grid_layout(4, 5);
  auto [out, trace] = attn->forward_traced(random_tokens(2, 20, 16, 11), layout);
  const auto& g = trace->group_of(0);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t h = 0; h < 2; ++h) {
      at::Tensor kv = at::zeros({8, 8}), plain = at::zeros({8, 8});
      for (int64_t j = 0; j < 20; ++j) {
        const at::Tensor outer = at::outer(g.k[b][h][j], g.v[b][h][j]);
        kv += 20.0 * trace->internal("rala.w")[b][h][j] * outer;
        plain += outer;
      }
      EXPECT_LE(max_abs_diff(trace->internal("rala.kv")[b][h], kv), 1e-4) << b << "," << h;
      EXPECT_LE(max_abs_diff(trace->internal("rala.kv_plain")[b][h], plain), 1e-4);
    }
  }
  // The reweighting changes the buffer: α is not all ones.
  EXPECT_GT(max_abs_diff(trace->internal("rala.kv"), trace->internal("rala.kv_plain")), 1e-3);
}

TEST(RalaAttention, RefusesPrefixTokensAndHeadDimNotMultipleOf4) {
  auto attn = make("rala", 16, 1);
  TokenLayout layout = attention::grid_layout(2, 3);
  layout.prefix = {"cls"};
  try {
    attn->forward(random_tokens(1, 7, 16), layout);
    FAIL() << "prefix tokens were accepted";
  } catch (const attention::AttentionError& err) {
    EXPECT_NE(std::string(err.what()).find("rala"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("prefix"), std::string::npos) << err.what();
  }
  try {
    make("rala", 24, 4);  // head dim 6
    FAIL() << "head dim 6 was accepted";
  } catch (const attention::AttentionError& err) {
    EXPECT_NE(std::string(err.what()).find("rala"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("multiple of 4"), std::string::npos) << err.what();
  }
  EXPECT_TRUE(attention::mechanism_info("rala").needs_grid);
  EXPECT_EQ(attn->named_parameters().size(), 6u);
}

}  // namespace
}  // namespace attnlab::testing
