// flatten (FLatten focused linear attention): module parity with the reference fixture
// (out, φq, φk per head, the dwc term, the result fed to proj; ≤ 1e-5), rows that sum to 1
// and rebuild the forward with the dwc term, the O(N) products, the positional encoding's
// fixed token count, and sr_ratio > 1 (no fixture: checked against the formulas of
// SPEC_COMPARISON written out here, interpolation included).
#include <cmath>

#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// The attention result fed to proj, from the trace's internals: merged heads of
// φq·kv/(φq·mean φk + 1e-6), plus the dwc term.
at::Tensor flatten_mixed_from_internals(const attention::AttentionTrace& t) {
  const auto& g = t.group_of(0);
  const at::Tensor den = at::matmul(g.q, t.internal("flatten.k_mean").unsqueeze(-1));
  const at::Tensor out = at::matmul(g.q, t.internal("flatten.kv")) / (den + 1e-6);
  return attention::merge_heads(out + t.internal("flatten.dwc_v"));
}

TEST(FlattenAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("flatten_attn");
  const auto expected = parity_expected("flatten_attn");
  auto attn = make("flatten", 32, 2, {{"qkv_bias", 1}, {"num_patches", 48}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // (1, 48, 32) on 8×6
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(8, 6));
  EXPECT_LE(max_abs_diff(y, expected.at("out")), 1e-5);
  const auto& g = trace->group_of(0);
  EXPECT_LE(max_abs_diff(g.q, expected.at("phi_q")), 1e-5);
  EXPECT_LE(max_abs_diff(g.k, expected.at("phi_k")), 1e-5);
  // out.dwc is (B·h, d, H, W); the trace keeps (B, h, N, d).
  const at::Tensor dwc = expected.at("out.dwc").reshape({1, 2, 16, 48}).transpose(-2, -1);
  EXPECT_LE(max_abs_diff(trace->internal("flatten.dwc_v"), dwc), 1e-5);
  EXPECT_LE(max_abs_diff(flatten_mixed_from_internals(*trace), expected.at("in.proj")), 1e-5);
  // Without num_patches the module has no positional encoding: the fixture's is unexpected.
  auto bare = make("flatten", 32, 2, {{"qkv_bias", 1}});
  EXPECT_THROW(load_from(*bare, weights, ""), nn::StateLoadError);
}

// Rows · v scaled by den/(den + 1e-6), plus the dwc term, through proj, is the forward.
void expect_rows_rebuild_forward(attention::AttentionMechanism& m, const at::Tensor& x,
                                 const TokenLayout& layout) {
  auto [y, trace] = m.forward_traced(x, layout);
  const int64_t batch = x.size(0);
  at::Tensor mixed = trace->internal("flatten.dwc_v").clone();
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t h = 0; h < trace->heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);
      EXPECT_GT(rows.min().item<double>(), 0.0);
      EXPECT_LE(max_abs_diff(rows.sum(1), at::ones({layout.tokens()})), 1e-5);
      const auto& g = trace->group_of(h);
      const at::Tensor den =
          at::matmul(g.q[b][h], trace->internal("flatten.k_mean")[b][h]).unsqueeze(1);
      mixed[b][h] += rows_times_v(*trace, b, h) * (den / (den + 1e-6));
      const at::Tensor v = at::randn({layout.tokens(), 2});
      const at::Tensor spread = attention::rows_on_tokens(rows, g.keys, layout);
      EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(spread, v)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(spread.t(), v)), 1e-5);
    }
  auto p = m.named_parameters();
  const at::Tensor rebuilt =
      at::linear(attention::merge_heads(mixed), p["proj.weight"], p["proj.bias"]);
  EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
}

TEST(FlattenAttention, RowsSumToOneAndRebuildTheForward) {
  auto attn = make("flatten", 24, 3, {{"kernel_size", 3}});
  attn->eval();
  {
    at::NoGradGuard no_grad;
    attn->named_parameters()["scale"].normal_(0, 0.5);  // zero-initialised otherwise
  }
  expect_rows_rebuild_forward(*attn, random_tokens(2, 20, 24), attention::grid_layout(5, 4));
  const auto ranks = attn->forward_traced(random_tokens(1, 20, 24), attention::grid_layout(5, 4))
                         .trace->rank_matrices(0);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].matrices.sizes(), (at::IntArrayRef{3, 8, 8}));
}

TEST(FlattenAttention, ThePositionalEncodingFixesTheTokenCount) {
  auto attn = make("flatten", 32, 2, {{"num_patches", 48}});
  EXPECT_EQ(attn->named_parameters()["positional_encoding"].sizes(), (at::IntArrayRef{1, 48, 32}));
  EXPECT_NO_THROW(attn->forward(at::randn({1, 48, 32}), attention::grid_layout(6, 8)));
  try {
    attn->forward(at::randn({1, 42, 32}), attention::grid_layout(7, 6));
    FAIL() << "a 42-token layer ran with a 48-token positional encoding";
  } catch (const attention::AttentionError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("flatten"), std::string::npos) << what;
    EXPECT_NE(what.find("num_patches = 48"), std::string::npos) << what;
    EXPECT_NE(what.find("42 tokens"), std::string::npos) << what;
  }
  EXPECT_THROW(make("flatten", 32, 2, {{"kernel_size", 4}}), attention::AttentionError);
  // Without an encoding any grid runs.
  EXPECT_NO_THROW(
      make("flatten", 32, 2)->forward(at::randn({1, 42, 32}), attention::grid_layout(7, 6)));
}

// SPEC_COMPARISON's sr_ratio R > 1, written out: keys and values from LayerNorm(conv_R(x)),
// the attention over n pooled keys, v interpolated linearly n -> N (align_corners false:
// source position (i + 0.5)·n/N − 0.5, clamped at 0) before the dwc.
at::Tensor reduced_reference(attention::AttentionMechanism& m, const at::Tensor& x, int64_t height,
                             int64_t width, int64_t heads, int64_t r, double p_focus) {
  auto p = m.named_parameters();
  const int64_t batch = x.size(0), n_tok = x.size(1), c = x.size(2), d = c / heads;
  const at::Tensor grid = x.transpose(1, 2).reshape({batch, c, height, width});
  at::Tensor pooled =
      at::conv2d(grid, p["sr.weight"], p["sr.bias"], {r, r}).flatten(2).transpose(1, 2);
  pooled = at::layer_norm(pooled, {c}, p["norm.weight"], p["norm.bias"], 1e-5);
  const at::Tensor kv = at::linear(pooled, p["kv.weight"], p["kv.bias"]);
  const at::Tensor k_raw = kv.slice(2, 0, c) + p["positional_encoding"];
  const at::Tensor v = kv.slice(2, c);
  const at::Tensor s = at::log1p(at::exp(p["scale"]));
  auto phi = [&](const at::Tensor& t) {
    const at::Tensor f = (at::relu(t) + 1e-6) / s;
    const at::Tensor fp = at::pow(f, p_focus);
    return fp * (f.norm(2, -1, true) / fp.norm(2, -1, true));
  };
  auto heads_of = [&](const at::Tensor& t) {
    return t.reshape({batch, t.size(1), heads, d}).permute({0, 2, 1, 3});
  };
  const at::Tensor q = heads_of(phi(at::linear(x, p["q.weight"], p["q.bias"])));
  const at::Tensor k = heads_of(phi(k_raw)), vh = heads_of(v);
  const int64_t n = k.size(2);
  // Σ_j (φq_i·φk_j) v_j / (φq_i·Σ_j φk_j + n·1e-6): the mean form times n/n.
  const at::Tensor scores = at::matmul(q, k.transpose(-2, -1));
  at::Tensor out = at::matmul(scores, vh) / (scores.sum(-1, true) + 1e-6 * n);
  const at::Tensor src = ((at::arange(n_tok, at::kDouble) + 0.5) * n / n_tok - 0.5).clamp_min(0);
  const at::Tensor lo = src.floor().to(at::kLong);
  const at::Tensor hi = (lo + 1).clamp_max(n - 1);
  const at::Tensor w = (src - lo.to(at::kDouble)).to(at::kFloat).view({1, 1, -1, 1});
  const at::Tensor v_up = vh.index_select(2, lo) * (1 - w) + vh.index_select(2, hi) * w;
  const at::Tensor image = v_up.reshape({batch * heads, height, width, d}).permute({0, 3, 1, 2});
  const int64_t ks = p["dwc.weight"].size(-1);
  const at::Tensor dwc =
      at::conv2d(image, p["dwc.weight"], p["dwc.bias"], {1, 1}, {ks / 2, ks / 2}, {1, 1}, d);
  out = out + dwc.reshape({batch, heads, d, n_tok}).transpose(-2, -1);
  return at::linear(attention::merge_heads(out), p["proj.weight"], p["proj.bias"]);
}

TEST(FlattenAttention, SpatialReductionPoolsTheKeys) {
  auto attn =
      make("flatten", 16, 2,
           {{"sr_ratio", 2}, {"qkv_bias", 1}, {"num_patches", 24}, {"focusing_factor", 2.5}});
  attn->eval();
  {
    at::NoGradGuard no_grad;
    at::manual_seed(11);
    for (auto& t : attn->named_parameters()) t.value().normal_(0, 0.4);
  }
  EXPECT_EQ(attn->named_parameters()["positional_encoding"].sizes(), (at::IntArrayRef{1, 6, 16}));
  const TokenLayout layout = attention::grid_layout(6, 4);
  const at::Tensor x = random_tokens(2, 24, 16);
  auto [y, trace] = attn->forward_traced(x, layout);
  EXPECT_LE(max_abs_diff(y, reduced_reference(*attn, x, 6, 4, 2, 2, 2.5)), 1e-5);
  const auto& keys = trace->group_of(0).keys;
  EXPECT_EQ(keys.key_h, 3);
  EXPECT_EQ(keys.key_w, 2);
  EXPECT_EQ(keys.cell, 2);
  expect_rows_rebuild_forward(*attn, x, layout);
  attention::TraceOptions options;
  options.explicit_attention = true;
  EXPECT_LE(max_abs_diff(attn->forward_traced(x, layout, options).output, y), 1e-5);
  try {
    make("flatten", 16, 2, {{"sr_ratio", 2}})
        ->forward(at::randn({1, 20, 16}), attention::grid_layout(5, 4));
    FAIL() << "sr_ratio 2 ran on a 5-row grid";
  } catch (const attention::AttentionError& e) {
    EXPECT_NE(std::string(e.what()).find("sr_ratio 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace attnlab::testing
