// pola (PolaFormer polarity-aware linear attention): module parity with the reference fixture
// (out, φq, φk per head, the sr conv and its norm, the dwc term, the gated result fed to proj;
// ≤ 1e-5), the two maps per head as trace heads whose rows sum to 1 and rebuild the forward
// with the dwc term and the gate, the O(N) products, the KV buffers, the positional
// encoding's fixed token count, and configurations the fixture does not cover (sr_ratio 1,
// 3, other α, kernel and heads) against SPEC_COMPARISON's formulas written out here.
#include <cmath>
#include <cstdio>

#include "core/attention/head_outputs.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

// The gated result fed to proj, from the trace's internals: per head [x_sim | x_opp] with
// x = φq·kv/(φq·mean φk + 1e-6), plus the dwc term, merged, times the gate.
at::Tensor pola_mixed_from_internals(const attention::AttentionTrace& t) {
  const at::Tensor k_mean = t.internal("pola.k_mean").unsqueeze(-1);
  auto half = [&](const attention::HeadGroup& g, const std::string& kv) {
    return at::matmul(g.q, t.internal(kv)) / (at::matmul(g.q, k_mean) + 1e-6);
  };
  const at::Tensor out =
      at::cat({half(t.groups.at(0), "pola.kv_sim"), half(t.groups.at(1), "pola.kv_opp")}, -1);
  return attention::merge_heads(out + t.internal("pola.dwc")) * t.internal("pola.gate");
}

TEST(PolaAttention, ReproducesTheReferenceModule) {
  const auto weights = parity_weights("pola_attn");
  const auto expected = parity_expected("pola_attn");
  const std::map<std::string, double> options = {
      {"qkv_bias", 1}, {"sr_ratio", 2}, {"kernel_size", 5}, {"alpha", 4}, {"num_patches", 48}};
  auto attn = make("pola", 32, 2, options);
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // (1, 48, 32) on 8×6
  const TokenLayout layout = attention::grid_layout(8, 6);
  auto [y, trace] = attn->forward_traced(x, layout);
  EXPECT_LE(max_abs_diff(y, expected.at("out")), 1e-5);
  EXPECT_LE(max_abs_diff(attn->forward(x, layout), expected.at("out")), 1e-5);
  // φ reaches ~1100 here (powers up to 1 + α): float32's spacing there is 1.2e-4, and the
  // power multiplies q's rounding by p, so the features are compared at 1e-5 of their scale.
  const double q_bound = 1e-5 * expected.at("phi_q").abs().max().item<double>();
  const double k_bound = 1e-5 * expected.at("phi_k").abs().max().item<double>();
  EXPECT_LE(max_abs_diff(trace->internal("pola.phi_q"), expected.at("phi_q")), q_bound);
  EXPECT_LE(max_abs_diff(trace->group_of(0).q, expected.at("phi_q")), q_bound);
  // The opposite-sign group's features are φq with its halves swapped.
  const auto parts = expected.at("phi_q").chunk(2, -1);
  EXPECT_LE(max_abs_diff(trace->group_of(2).q, at::cat({parts[1], parts[0]}, -1)), q_bound);
  EXPECT_LE(max_abs_diff(trace->internal("pola.phi_k"), expected.at("phi_k")), k_bound);
  EXPECT_LE(max_abs_diff(trace->group_of(3).k, expected.at("phi_k")), k_bound);
  // Relative to their largest entry the features agree to a few float32 ulps.
  std::printf("[pola] phi_q %.3g, phi_k %.3g of their scale\n",
              max_abs_diff(trace->internal("pola.phi_q"), expected.at("phi_q")) / q_bound * 1e-5,
              max_abs_diff(trace->internal("pola.phi_k"), expected.at("phi_k")) / k_bound * 1e-5);
  EXPECT_LE(max_abs_diff(trace->internal("pola.sr"), expected.at("out.sr")), 1e-5);
  EXPECT_LE(max_abs_diff(trace->internal("pola.norm"), expected.at("out.norm")), 1e-5);
  // out.dwc is (B·h, d, H, W); the trace keeps (B, h, N, d).
  const at::Tensor dwc = expected.at("out.dwc").reshape({1, 2, 16, 48}).transpose(-2, -1);
  EXPECT_LE(max_abs_diff(trace->internal("pola.dwc"), dwc), 1e-5);
  EXPECT_LE(max_abs_diff(pola_mixed_from_internals(*trace), expected.at("in.proj")), 1e-5);
  std::printf(
      "[pola] max |diff|: out %.3g, out.sr %.3g, out.norm %.3g, out.dwc %.3g, in.proj %.3g\n",
      max_abs_diff(y, expected.at("out")),
      max_abs_diff(trace->internal("pola.sr"), expected.at("out.sr")),
      max_abs_diff(trace->internal("pola.norm"), expected.at("out.norm")),
      max_abs_diff(trace->internal("pola.dwc"), dwc),
      max_abs_diff(pola_mixed_from_internals(*trace), expected.at("in.proj")));
  attention::TraceOptions explicit_form;
  explicit_form.explicit_attention = true;
  EXPECT_LE(max_abs_diff(attn->forward_traced(x, layout, explicit_form).output.detach(),
                         expected.at("out")),
            1e-5);
  // Without num_patches the module has no positional encoding, without sr_ratio no sr/norm:
  // the fixture's are unexpected.
  auto bare = make("pola", 32, 2, {{"qkv_bias", 1}, {"sr_ratio", 2}});
  EXPECT_THROW(load_from(*bare, weights, ""), nn::StateLoadError);
  auto unreduced = make("pola", 32, 2, {{"qkv_bias", 1}, {"num_patches", 48}});
  EXPECT_THROW(load_from(*unreduced, weights, ""), nn::StateLoadError);
}

// Per trace head rows · v_half scaled by den/(den + 1e-6), the halves side by side, plus the
// dwc term, merged, gated, through proj, is the forward.
void expect_pola_rows_rebuild_forward(attention::AttentionMechanism& m, const at::Tensor& x,
                                      const TokenLayout& layout) {
  auto [y, trace] = m.forward_traced(x, layout);
  const int64_t batch = x.size(0), heads = m.config().heads;
  ASSERT_EQ(trace->heads, 2 * heads);
  std::vector<at::Tensor> halves(2);
  for (int64_t half = 0; half < 2; ++half) {
    std::vector<at::Tensor> images;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<at::Tensor> per_head;
      for (int64_t h = half * heads; h < (half + 1) * heads; ++h) {
        const at::Tensor rows = trace->matrix(b, h);
        EXPECT_GE(rows.min().item<double>(), 0.0);
        EXPECT_LE(max_abs_diff(rows.sum(1), at::ones({layout.tokens()})), 1e-5);
        const auto& g = trace->group_of(h);
        EXPECT_EQ(g.name, half == 0 ? "sim" : "opp");
        const at::Tensor den = at::matmul(g.q[b][h - g.first_head],
                                          trace->internal("pola.k_mean")[b][h - g.first_head])
                                   .unsqueeze(1);
        per_head.push_back(rows_times_v(*trace, b, h) * (den / (den + 1e-6)));
        const at::Tensor v = at::randn({layout.tokens(), 2});
        const at::Tensor spread = attention::rows_on_tokens(rows, g.keys, layout);
        EXPECT_LE(max_abs_diff(trace->apply(b, h, v), at::matmul(spread, v)), 1e-5);
        EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, v), at::matmul(spread.t(), v)), 1e-5);
      }
      images.push_back(at::stack(per_head));
    }
    halves[size_t(half)] = at::stack(images);  // (B, h, N, d/2)
  }
  const at::Tensor mixed = at::cat(halves, -1) + trace->internal("pola.dwc");
  auto p = m.named_parameters();
  const at::Tensor rebuilt =
      at::linear(attention::merge_heads(mixed) * trace->internal("pola.gate"), p["proj.weight"],
                 p["proj.bias"]);
  EXPECT_LE(max_abs_diff(rebuilt, y), 1e-5);
  attention::TraceOptions options;
  options.explicit_attention = true;
  EXPECT_LE(max_abs_diff(m.forward_traced(x, layout, options).output.detach(), y), 1e-5);
}

void pola_randomise(attention::AttentionMechanism& m, uint64_t seed) {
  at::NoGradGuard no_grad;
  at::manual_seed(seed);
  for (auto& t : m.named_parameters()) t.value().normal_(0, 0.4);
}

TEST(PolaAttention, TwoMapsPerHeadRebuildTheForward) {
  auto attn = make("pola", 24, 3, {{"kernel_size", 3}, {"alpha", 3}});
  attn->eval();
  pola_randomise(*attn, 5);
  expect_pola_rows_rebuild_forward(*attn, random_tokens(2, 20, 24), attention::grid_layout(5, 4));
  const auto ranks = attn->forward_traced(random_tokens(1, 20, 24), attention::grid_layout(5, 4))
                         .trace->rank_matrices(0);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].matrices.sizes(), (at::IntArrayRef{6, 16, 4}));  // 2h × (2d, d/2)
  // Trace head t < h: head t's first d/2 proj inputs; t >= h: head t − h's last d/2.
  const auto* source = dynamic_cast<const attention::HeadOutputSource*>(attn.get());
  ASSERT_NE(source, nullptr);
  const auto columns = source->head_columns();
  ASSERT_EQ(columns.size(), 6u);
  EXPECT_EQ(columns[1].first, 8);
  EXPECT_EQ(columns[4].first, 12);
  EXPECT_EQ(columns[4].count, 4);
}

// SPEC_COMPARISON's PolaFormer written out: keys and values (R > 1: from LayerNorm(conv_R(x))),
// k + positional encoding, q and k over softplus(scale), per head and channel powers, the two
// maps as explicit score matrices over the sign-split features, v interpolated linearly n -> N
// (align_corners false: source position (i + 0.5)·n/N − 0.5, clamped at 0) before the dwc,
// the gate, proj.
at::Tensor pola_spec_reference(attention::AttentionMechanism& m, const at::Tensor& x,
                               int64_t height, int64_t width, int64_t heads, int64_t r,
                               double alpha) {
  auto p = m.named_parameters();
  auto bias = [&](const std::string& name) {  // undefined without qkv_bias
    const at::Tensor* t = p.find(name);
    return t ? *t : at::Tensor();
  };
  const int64_t batch = x.size(0), n_tok = x.size(1), c = x.size(2), d = c / heads;
  at::Tensor keys_from = x;
  if (r > 1) {
    const at::Tensor grid = x.transpose(1, 2).reshape({batch, c, height, width});
    keys_from = at::conv2d(grid, p["sr.weight"], p["sr.bias"], {r, r}).flatten(2).transpose(1, 2);
    keys_from = at::layer_norm(keys_from, {c}, p["norm.weight"], p["norm.bias"], 1e-5);
  }
  const at::Tensor qg = at::linear(x, p["qg.weight"], bias("qg.bias"));
  const at::Tensor kv = at::linear(keys_from, p["kv.weight"], bias("kv.bias"));
  at::Tensor k_raw = kv.slice(2, 0, c);
  if (p.contains("positional_encoding")) k_raw = k_raw + p["positional_encoding"];
  const at::Tensor s = at::log1p(at::exp(p["scale"]));
  auto heads_of = [&](const at::Tensor& t) {
    return t.reshape({batch, t.size(1), heads, d}).permute({0, 2, 1, 3});
  };
  const at::Tensor q = heads_of(qg.slice(2, 0, c) / s), k = heads_of(k_raw / s);
  const at::Tensor vh = heads_of(kv.slice(2, c));
  const at::Tensor pw = 1 + alpha * (1 / (1 + at::exp(-p["power"])));
  auto feature = [&](const at::Tensor& t) { return at::pow(at::clamp_min(t, 0), pw); };
  const at::Tensor qp = feature(q), qn = feature(-q);
  const at::Tensor fk = at::cat({feature(k), feature(-k)}, -1);
  const int64_t n = k.size(2);
  // Σ_j (φq_i·φk_j) v_j / (Σ_j φq_i·φk_j + n·1e-6): the mean form times n/n.
  auto mix = [&](const at::Tensor& fq, const at::Tensor& v) {
    const at::Tensor scores = at::matmul(fq, fk.transpose(-2, -1));
    return at::matmul(scores, v) / (scores.sum(-1, true) + 1e-6 * n);
  };
  at::Tensor out = at::cat({mix(at::cat({qp, qn}, -1), vh.slice(3, 0, d / 2)),
                            mix(at::cat({qn, qp}, -1), vh.slice(3, d / 2))},
                           -1);
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
  const at::Tensor gated = attention::merge_heads(out) * qg.slice(2, c);
  return at::linear(gated, p["proj.weight"], p["proj.bias"]);
}

TEST(PolaAttention, ConfigurationsBeyondTheFixtureFollowTheSpec) {
  {  // R = 1, positional encoding on every token, α 3, 3×3 dwc, three heads
    auto attn = make("pola", 24, 3,
                     {{"qkv_bias", 1}, {"num_patches", 20}, {"alpha", 3}, {"kernel_size", 3}});
    attn->eval();
    pola_randomise(*attn, 11);
    const at::Tensor x = random_tokens(2, 20, 24);
    const at::Tensor y = attn->forward(x, attention::grid_layout(5, 4));
    EXPECT_LE(max_abs_diff(y, pola_spec_reference(*attn, x, 5, 4, 3, 1, 3.0)), 1e-5);
  }
  {  // R = 3 on 6×3 (two pooled keys), no encoding, α 7, no qkv bias
    auto attn = make("pola", 16, 2, {{"sr_ratio", 3}, {"alpha", 7}, {"kernel_size", 3}});
    attn->eval();
    pola_randomise(*attn, 12);
    const TokenLayout layout = attention::grid_layout(6, 3);
    const at::Tensor x = random_tokens(2, 18, 16);
    auto [y, trace] = attn->forward_traced(x, layout);
    EXPECT_LE(max_abs_diff(y, pola_spec_reference(*attn, x, 6, 3, 2, 3, 7.0)), 1e-5);
    const auto& keys = trace->group_of(3).keys;
    EXPECT_EQ(keys.key_h, 2);
    EXPECT_EQ(keys.key_w, 1);
    EXPECT_EQ(keys.cell, 3);
    expect_pola_rows_rebuild_forward(*attn, x, layout);
  }
}

TEST(PolaAttention, RefusesWhatItCannotRunWithAMessage) {
  auto attn = make("pola", 32, 2, {{"num_patches", 48}});
  EXPECT_EQ(attn->named_parameters()["positional_encoding"].sizes(), (at::IntArrayRef{1, 48, 32}));
  EXPECT_EQ(attn->named_parameters()["power"].sizes(), (at::IntArrayRef{1, 2, 1, 16}));
  EXPECT_NO_THROW(attn->forward(at::randn({1, 48, 32}), attention::grid_layout(6, 8)));
  auto message_of = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const attention::AttentionError& e) {
      return e.what();
    }
    return "";
  };
  const std::string count = message_of([&] {
    attn->forward(at::randn({1, 42, 32}), attention::grid_layout(7, 6));
  });
  EXPECT_NE(count.find("pola"), std::string::npos) << count;
  EXPECT_NE(count.find("num_patches = 48"), std::string::npos) << count;
  EXPECT_NE(count.find("42 tokens"), std::string::npos) << count;
  EXPECT_NE(message_of([] {
              make("pola", 32, 2, {{"kernel_size", 4}});
            }).find("kernel_size"),
            std::string::npos);
  EXPECT_NE(message_of([] { make("pola", 30, 2); }).find("even"), std::string::npos);
  const std::string sr = message_of([] {
    make("pola", 16, 2, {{"sr_ratio", 2}})
        ->forward(at::randn({1, 20, 16}), attention::grid_layout(5, 4));
  });
  EXPECT_NE(sr.find("sr_ratio 2"), std::string::npos) << sr;
  // Without an encoding any grid runs.
  EXPECT_NO_THROW(
      make("pola", 32, 2)->forward(at::randn({1, 42, 32}), attention::grid_layout(7, 6)));
}

}  // namespace
}  // namespace attnlab::testing
