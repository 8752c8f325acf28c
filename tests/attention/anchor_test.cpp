// anchor (AnchorFormer): parity with the reference AnchorDeiT (anchor_deit_mini block 0),
// the implicit matrix S = A Δ⁻¹ Aᵀ, an unused anchor (Δ_m = 0), options and parameters.
#include <cmath>
#include <iostream>

#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TokenLayout distilled_layout(int64_t h, int64_t w) {
  TokenLayout l = attention::grid_layout(h, w);
  l.prefix = {"cls", "dist"};
  return l;
}

// Block 0's input of the distilled AnchorDeiT with the given order of the two prefix tokens.
at::Tensor block0_input(const nn::TensorMap& w, const nn::TensorMap& e, bool cls_first) {
  at::Tensor cls = w.at("cls_token"), dist = w.at("dist_token");
  return at::cat({cls_first ? cls : dist, cls_first ? dist : cls, e.at("out.patch_embed")}, 1) +
         w.at("pos_embed");
}

// A (B, h, N, M) computed directly from the module's parameters, in double precision.
at::Tensor direct_assignment(attention::AttentionMechanism& m, const at::Tensor& x, int64_t heads) {
  auto p = m.named_parameters();
  const int64_t b = x.size(0), n = x.size(1), c = x.size(2), d = c / heads;
  at::Tensor emb = at::linear(x.to(at::kDouble), p["x_to_emb.weight"].to(at::kDouble));
  at::Tensor e = emb.slice(-1, 0, c).reshape({b, n, heads, d}).permute({0, 2, 1, 3});
  at::Tensor logits = at::matmul(e, p["dist_anchor_B.weight"].to(at::kDouble).t());
  return at::softmax(logits / std::sqrt(static_cast<double>(d)), -1);
}

TEST(AnchorAttention, MatchesAnchorDeitMiniBlock0AttentionAndBlock) {
  auto w = parity_weights("anchor_deit_mini");
  auto e = parity_expected("anchor_deit_mini");
  at::Tensor x = block0_input(w, e, /*cls_first=*/true);
  auto attn = make("anchor", 64, 2, {{"anchors", 8}});
  load_from(*attn, w, "blocks.0.attn.");
  attn->eval();
  auto [out, trace] =
      attn->forward_traced(layer_norm(x, w, "blocks.0.norm1", 1e-6), distilled_layout(14, 14));
  const double d_attn = max_abs_diff(out, e.at("out.blocks.0.attn"));
  std::cout << "anchor_deit_mini out.blocks.0.attn max |diff|: " << d_attn << "\n";
  EXPECT_LE(d_attn, 1e-5);

  at::Tensor y = x + out;
  y = y + timm_mlp(layer_norm(y, w, "blocks.0.norm2", 1e-6), w, "blocks.0.mlp");
  const double d_block = max_abs_diff(y, e.at("out.blocks.0"));
  std::cout << "anchor_deit_mini out.blocks.0 max |diff|: " << d_block << "\n";
  EXPECT_LE(d_block, 1e-5);

  EXPECT_EQ(trace->internal("anchor.A").sizes(), at::IntArrayRef({1, 2, 198, 8}));
  EXPECT_EQ(trace->internal("anchor.delta").sizes(), at::IntArrayRef({1, 2, 8}));
}

TEST(AnchorAttention, DistilledTokenOrderIsClsThenDist) {
  // The fixture fixes the order: with dist before cls block 0's attention must fail parity
  // clearly (> 10× the 1e-5 tolerance; the right order matches to 0). The gap is modest
  // because only the two prefix tokens change and tokens mix only through the anchors.
  auto w = parity_weights("anchor_deit_mini");
  auto e = parity_expected("anchor_deit_mini");
  auto attn = make("anchor", 64, 2, {{"anchors", 8}});
  load_from(*attn, w, "blocks.0.attn.");
  at::Tensor swapped = block0_input(w, e, /*cls_first=*/false);
  at::Tensor out =
      attn->forward(layer_norm(swapped, w, "blocks.0.norm1", 1e-6), distilled_layout(14, 14));
  const double d = max_abs_diff(out, e.at("out.blocks.0.attn"));
  std::cout << "anchor_deit_mini with dist before cls, max |diff|: " << d << "\n";
  EXPECT_GT(d, 1e-4);
}

TEST(AnchorAttention, OutputIsToOutOfRowsTimesValuesAndRowsSumToOne) {
  auto attn = make("anchor", 48, 3, {{"anchors", 6}});
  TokenLayout layout = distilled_layout(5, 7);
  at::Tensor x = random_tokens(2, layout.tokens(), 48);
  auto [out, trace] = attn->forward_traced(x, layout);
  ASSERT_EQ(trace->mechanism, "anchor");
  auto p = attn->named_parameters();
  for (int64_t b = 0; b < 2; ++b) {
    std::vector<at::Tensor> heads;
    for (int64_t h = 0; h < 3; ++h) {
      heads.push_back(rows_times_v(*trace, b, h));
      at::Tensor sums = trace->matrix(b, h).sum(-1);
      const double sum_err = max_abs_diff(sums, at::ones_like(sums));
      std::cout << "anchor rows sum-to-one b" << b << " h" << h << ": " << sum_err << "\n";
      EXPECT_LE(sum_err, 1e-5);
    }
    at::Tensor rebuilt = at::linear(at::cat(heads, -1), p["to_out.0.weight"], p["to_out.0.bias"]);
    const double d = max_abs_diff(rebuilt, out[b]);
    std::cout << "anchor to_out(rows·V) vs output, image " << b << ": " << d << "\n";
    EXPECT_LE(d, 1e-5);
  }
  // q and k of the trace are the one shared embedding E.
  EXPECT_TRUE(trace->groups[0].q.equal(trace->groups[0].k));
  auto r = trace->row(1, 1, 2);  // the dist token's row
  EXPECT_EQ(r.weights.size(0), layout.tokens());
  EXPECT_EQ(r.keys.prefix, 2);
  EXPECT_LE(max_abs_diff(r.weights, trace->matrix(1, 2)[1]), 1e-7);
}

TEST(AnchorAttention, ImplicitMatrixEqualsADeltaInverseATransposeBuiltDirectly) {
  auto attn = make("anchor", 32, 2, {{"anchors", 5}});
  TokenLayout layout = distilled_layout(4, 5);
  at::Tensor x = random_tokens(2, layout.tokens(), 32, 19);
  auto [out, trace] = attn->forward_traced(x, layout);
  at::Tensor a = direct_assignment(*attn, x, 2);  // (B, h, N, M), double
  EXPECT_LE(max_abs_diff(trace->internal("anchor.A"), a), 1e-6);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h) {
      at::Tensor delta = a[b][h].sum(0);
      at::Tensor s = a[b][h].matmul(at::diag(delta.reciprocal())).matmul(a[b][h].t());
      const double d = max_abs_diff(trace->matrix(b, h), s);
      std::cout << "anchor matrix vs A·diag(1/Δ)·Aᵀ b" << b << " h" << h << ": " << d << "\n";
      EXPECT_LE(d, 1e-5);
      EXPECT_LE(max_abs_diff(trace->internal("anchor.delta")[b][h], delta), 1e-5);
      EXPECT_LE(max_abs_diff(trace->internal("anchor.delta_inv")[b][h], delta.reciprocal()), 1e-5);
    }
}

TEST(AnchorAttention, UnusedAnchorHasZeroInverseDegreeAndChangesNothing) {
  // C 16, 2 heads (d 8), 4 anchors. Channel 0 of every head's E copies input channel 0,
  // which is 1 for every token; anchor 2 is -1e4·√d along that channel only, so its logit
  // is -1e4 for every token, A[:, 2] underflows to 0 and Δ_2 = 0 (1/Δ_2 = inf -> 0).
  const int64_t c = 16, d = 8;
  at::manual_seed(23);
  at::Tensor emb = at::randn({2 * c, c}) * 0.3;
  for (int64_t head = 0; head < 2; ++head) {
    emb[head * d].zero_();
    emb[head * d][0] = 1.0;
  }
  at::Tensor anchors = at::randn({4, d});
  anchors[2].zero_();
  anchors[2][0] = -1e4 * std::sqrt(static_cast<double>(d));
  nn::TensorMap weights{{"x_to_emb.weight", emb},
                        {"dist_anchor_B.weight", anchors},
                        {"to_out.0.weight", at::randn({c, c}) * 0.2},
                        {"to_out.0.bias", at::randn({c})}};
  auto attn = make("anchor", c, 2, {{"anchors", 4}});
  load_from(*attn, weights, "");
  TokenLayout layout = distilled_layout(3, 3);
  at::Tensor x = random_tokens(2, layout.tokens(), c, 29);
  x.select(2, 0).fill_(1.0);
  auto [out, trace] = attn->forward_traced(x, layout);
  at::Tensor unused_a = trace->internal("anchor.A").select(3, 2);
  EXPECT_TRUE((unused_a == 0).all().item<bool>());
  EXPECT_TRUE((trace->internal("anchor.delta").select(2, 2) == 0).all().item<bool>());
  EXPECT_TRUE((trace->internal("anchor.delta_inv").select(2, 2) == 0).all().item<bool>());
  EXPECT_TRUE(at::isfinite(trace->internal("anchor.delta_inv")).all().item<bool>());
  EXPECT_TRUE(at::isfinite(out).all().item<bool>());
  at::Tensor sums = trace->matrix(1, 0).sum(-1);
  EXPECT_LE(max_abs_diff(sums, at::ones_like(sums)), 1e-5);

  // The same layer without anchor 2 gives the same output.
  auto three = make("anchor", c, 2, {{"anchors", 3}});
  weights["dist_anchor_B.weight"] = at::cat({anchors.slice(0, 0, 2), anchors.slice(0, 3, 4)});
  load_from(*three, weights, "");
  const double diff = max_abs_diff(three->forward(x, layout), out);
  std::cout << "anchor with an unused anchor vs without it: " << diff << "\n";
  EXPECT_LE(diff, 1e-5);
}

TEST(AnchorAttention, AnchorsOptionAndParameterShapes) {
  auto p = make("anchor", 64, 2, {{"anchors", 8}})->named_parameters();
  ASSERT_EQ(p.size(), 4u);
  EXPECT_EQ(p["x_to_emb.weight"].sizes(), at::IntArrayRef({128, 64}));
  EXPECT_EQ(p["dist_anchor_B.weight"].sizes(), at::IntArrayRef({8, 32}));
  EXPECT_EQ(p["to_out.0.weight"].sizes(), at::IntArrayRef({64, 64}));
  EXPECT_EQ(p["to_out.0.bias"].sizes(), at::IntArrayRef({64}));
  EXPECT_EQ(make("anchor", 48, 3)->named_parameters()["dist_anchor_B.weight"].size(0), 30);
  EXPECT_THROW(make("anchor", 64, 2, {{"anchors", 0}}), attention::AttentionError);
  EXPECT_THROW(make("anchor", 64, 2, {{"anchors", 2.5}}), attention::AttentionError);
  EXPECT_THROW(make("anchor", 64, 2, {{"anchor", 8}}), attention::AttentionError);
}

TEST(AnchorAttention, SingleHeadHasNoOutputProjectionLikeTheReference) {
  // AnchorAttention uses nn.Identity for to_out when heads == 1 and dim_head == dim.
  auto attn = make("anchor", 16, 1, {{"anchors", 3}});
  auto p = attn->named_parameters();
  EXPECT_EQ(p.size(), 2u);
  EXPECT_FALSE(p.contains("to_out.0.weight"));
  TokenLayout layout = distilled_layout(2, 3);
  at::Tensor x = random_tokens(1, layout.tokens(), 16, 31);
  auto [out, trace] = attn->forward_traced(x, layout);
  EXPECT_LE(max_abs_diff(out[0], rows_times_v(*trace, 0, 0)), 1e-5);
}

}  // namespace
}  // namespace attnlab::testing
