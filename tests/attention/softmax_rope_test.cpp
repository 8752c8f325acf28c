// softmax_rope and the shared 2-D RoPE: parity with RAVLT's stage-3 attention (ravlt_mini,
// block 0), the stored RoPE.angle buffers, the rotation convention and the row properties.
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "core/attention/rope.h"
#include "tests/attention/ravlt_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TEST(SoftmaxRopeAttention, MatchesRavltMiniStage3Block0) {
  auto w = parity_weights("ravlt_mini");
  auto e = parity_expected("ravlt_mini");
  auto attn = make("softmax_rope", 128, 2);
  load_from(*attn, w, "layers.2.blocks.0.attn.");
  attn->eval();
  const at::Tensor x = ravlt_block0_input(e.at("out.layers.1"), w, 2);
  const TokenLayout layout = attention::grid_layout(14, 14);
  auto [out, trace] = attn->forward_traced(x, layout);
  const at::Tensor expected = e.at("out.layers.2.blocks.0.attn");  // (1, 128, 14, 14)
  const double diff = max_abs_diff(out.transpose(1, 2).reshape({1, 128, 14, 14}), expected);
  std::cout << "softmax_rope vs ravlt_mini layers.2.blocks.0.attn: max |diff| = " << diff << "\n";
  EXPECT_LE(diff, 1e-5);
  EXPECT_LE(max_abs_diff(attn->forward(x, layout), out), reordering_tolerance(out));
}

TEST(SoftmaxRopeAttention, OutputIsProjOfRowsTimesValuesPlusLepeTimesGateAndRowsSumToOne) {
  auto attn = make("softmax_rope", 32, 2);
  const TokenLayout layout = attention::grid_layout(5, 7);
  const at::Tensor x = random_tokens(2, 35, 32);
  auto [out, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->heads, 2);
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t h = 0; h < 2; ++h) {
      const at::Tensor sums = trace->matrix(b, h).sum(-1);
      EXPECT_LE(max_abs_diff(sums, at::ones_like(sums)), 1e-5);
    }
    const at::Tensor rebuilt = rebuild_ravlt_output(*trace, *attn, b, "softmax_rope");
    const double diff = max_abs_diff(rebuilt, out[b]);
    std::cout << "softmax_rope rows-rebuilt output, image " << b << ": max |diff| = " << diff
              << "\n";
    EXPECT_LE(diff, 1e-5);
  }
  auto r = trace->row(0, 30, 1);
  EXPECT_EQ(r.weights.size(0), 35);
  EXPECT_LE(max_abs_diff(r.weights, trace->matrix(0, 1)[30]), 1e-7);
}

TEST(SoftmaxRopeAttention, RefusesPrefixTokensAndHeadDimNotMultipleOf4) {
  auto attn = make("softmax_rope", 16, 2);
  TokenLayout layout = attention::grid_layout(3, 3);
  layout.prefix = {"cls", "dist"};
  try {
    attn->forward(random_tokens(1, 11, 16), layout);
    FAIL() << "prefix tokens were accepted";
  } catch (const attention::AttentionError& err) {
    EXPECT_NE(std::string(err.what()).find("softmax_rope"), std::string::npos) << err.what();
    EXPECT_NE(std::string(err.what()).find("prefix"), std::string::npos) << err.what();
  }
  EXPECT_THROW(make("softmax_rope", 20, 2), attention::AttentionError);  // head dim 10
  EXPECT_TRUE(attention::mechanism_info("softmax_rope").needs_grid);
  EXPECT_EQ(attn->named_parameters().size(), 6u);
}

TEST(Rope, AngleEqualsTheStoredBuffersOfRavltMini) {
  auto w = parity_weights("ravlt_mini");
  for (int stage = 0; stage < 4; ++stage) {
    const at::Tensor stored = w.at("layers." + std::to_string(stage) + ".RoPE.angle");
    const double diff = max_abs_diff(attention::rope_angle(64), stored);
    std::cout << "rope_angle(64) vs layers." << stage << ".RoPE.angle: max |diff| = " << diff
              << "\n";
    // The same float32 steps as the reference, but pow is vectorised (Sleef, 1-ulp
    // accurate) differently per ATen CPU capability: AVX-512 differs from AVX2 by an ulp.
    EXPECT_LE(diff, reordering_tolerance(stored, 4.0));
  }
  const at::Tensor a = attention::rope_angle(16);  // 4 frequencies, each twice
  ASSERT_EQ(a.size(0), 8);
  EXPECT_EQ(a.scalar_type(), at::kFloat);
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a[2 * i].item<float>(), a[2 * i + 1].item<float>());
    EXPECT_NEAR(a[2 * i].item<double>(), std::pow(10000.0, -i / 3.0), 1e-6);
  }
}

TEST(Rope, TablesTakeTheFirstHalfFromTheRowAndTheSecondFromTheColumn) {
  const auto t = attention::rope_tables(3, 5, 8, at::TensorOptions().dtype(at::kDouble));
  ASSERT_EQ(t.sin.sizes(), (std::vector<int64_t>{15, 8}));
  EXPECT_EQ(t.cos.scalar_type(), at::kDouble);
  const at::Tensor f = attention::rope_angle(8).to(at::kDouble);  // (4,)
  const int64_t y = 2, x = 3, token = y * 5 + x;
  for (int64_t c = 0; c < 4; ++c) {
    const double fy = y * f[c].item<double>(), fx = x * f[c].item<double>();
    EXPECT_NEAR(t.sin[token][c].item<double>(), std::sin(fy), 1e-12);
    EXPECT_NEAR(t.cos[token][c].item<double>(), std::cos(fy), 1e-12);
    EXPECT_NEAR(t.sin[token][4 + c].item<double>(), std::sin(fx), 1e-12);
    EXPECT_NEAR(t.cos[token][4 + c].item<double>(), std::cos(fx), 1e-12);
  }
}

TEST(Rope, RotatesInterleavedPairsAndDependsOnlyOnRelativePosition) {
  const auto t = attention::rope_tables(4, 6, 8, at::TensorOptions().dtype(at::kDouble));
  // e0 and e1 at token (1, 0): the pair (0, 1) turns by θ = 1·f0 = 1 rad.
  const at::Tensor e = at::eye(8, at::kDouble);
  const at::Tensor r0 = attention::apply_rope(e[0].expand({24, 8}), t)[6];
  const at::Tensor r1 = attention::apply_rope(e[1].expand({24, 8}), t)[6];
  EXPECT_NEAR(r0[0].item<double>(), std::cos(1.0), 1e-12);
  EXPECT_NEAR(r0[1].item<double>(), std::sin(1.0), 1e-12);
  EXPECT_NEAR(r1[0].item<double>(), -std::sin(1.0), 1e-12);
  EXPECT_NEAR(r1[1].item<double>(), std::cos(1.0), 1e-12);
  EXPECT_NEAR(r0.slice(0, 2).abs().sum().item<double>(), 0.0, 1e-12);
  // R(a)_p · R(b)_q depends on p − q only: shift both by (1, 2).
  at::manual_seed(5);
  const at::Tensor a = attention::apply_rope(at::randn({8}, at::kDouble).expand({24, 8}), t);
  const at::Tensor b = attention::apply_rope(at::randn({8}, at::kDouble).expand({24, 8}), t);
  auto tok = [](int64_t y, int64_t x) { return y * 6 + x; };
  const double before = a[tok(0, 1)].dot(b[tok(2, 0)]).item<double>();
  const double after = a[tok(1, 3)].dot(b[tok(3, 2)]).item<double>();
  EXPECT_NEAR(before, after, 1e-12);
  EXPECT_THROW(attention::rope_angle(6), attention::AttentionError);
  EXPECT_THROW(attention::rope_angle(0), attention::AttentionError);
}

}  // namespace
}  // namespace attnlab::testing
