// agent, agent_pvt (Agent attention, DeiT and PVT forms): module parity with both reference
// fixtures (out and every recorded internal: agent tokens, both softmaxes, the dwc term, sr
// and norm, the result fed to proj; ≤ 1e-5), rows that are the product q_attn·agent_attn,
// sum to 1 and rebuild the forward with the dwc term, the O(N) products, the dwc as added
// mixing, and grids, agent counts and sr ratios no fixture covers, checked against
// SPEC_COMPARISON's formulas written out here in float64 (pooling, bilinear and 1-D linear
// resizing as explicit interpolation matrices).
#include <cmath>
#include <cstdio>
#include <functional>

#include "core/attention/map_factors.h"
#include "tests/attention/attention_test_util.h"

namespace attnlab::testing {
namespace {

using attention::TokenLayout;

TokenLayout agent_cls_layout(int64_t h, int64_t w) {
  TokenLayout l = attention::grid_layout(h, w);
  l.prefix = {"cls"};
  return l;
}

// The result fed to proj, from the trace: merged heads of q_attn·V_a, plus the dwc term on
// the grid tokens.
at::Tensor agent_in_proj_from_internals(const attention::AttentionTrace& t) {
  at::Tensor mixed = attention::merge_heads(
      at::matmul(t.internal("agent.q_attn"), t.internal("agent.agent_values")));
  const int64_t prefix = t.layout.num_prefix();
  mixed.slice(1, prefix) += t.internal("agent.dwc").flatten(2).transpose(1, 2);
  return mixed;
}

// ≤ 1e-5, and the difference printed (the parity record).
void agent_expect_parity(const std::string& what, const at::Tensor& ours, const at::Tensor& ref) {
  const double delta = max_abs_diff(ours, ref);
  std::printf("[agent parity] %s: max|delta| = %.3g\n", what.c_str(), delta);
  EXPECT_LE(delta, 1e-5) << what;
}

TEST(AgentAttention, ReproducesTheDeitReferenceModule) {
  const auto weights = parity_weights("agent_attn");
  const auto expected = parity_expected("agent_attn");
  auto attn = make("agent", 32, 2, {{"qkv_bias", 1}, {"agent_num", 9}, {"window", 6}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // (1, 37, 32): cls + 6×6
  auto [y, trace] = attn->forward_traced(x, agent_cls_layout(6, 6));
  agent_expect_parity("agent_attn out", y, expected.at("out"));
  agent_expect_parity("agent_attn out (untraced)", attn->forward(x, agent_cls_layout(6, 6)),
                      expected.at("out"));
  for (const char* name : {"agent_tokens", "agent_attn", "q_attn"})
    agent_expect_parity(std::string("agent_attn ") + name,
                        trace->internal(std::string("agent.") + name), expected.at(name));
  agent_expect_parity("agent_attn out.dwc", trace->internal("agent.dwc"), expected.at("out.dwc"));
  agent_expect_parity("agent_attn in.proj", agent_in_proj_from_internals(*trace),
                      expected.at("in.proj"));
  // The PVT form's state dict (q, kv, sr, norm) is not the DeiT form's.
  auto pvt = make("agent_pvt", 32, 2, {{"agent_num", 9}, {"num_patches", 36}});
  EXPECT_THROW(load_from(*pvt, weights, ""), nn::StateLoadError);
}

TEST(AgentPvtAttention, ReproducesThePvtReferenceModule) {
  const auto weights = parity_weights("agent_pvt_attn");
  const auto expected = parity_expected("agent_pvt_attn");
  auto attn = make("agent_pvt", 32, 2,
                   {{"qkv_bias", 1}, {"agent_num", 16}, {"num_patches", 64}, {"sr_ratio", 2}});
  load_from(*attn, weights, "");
  attn->eval();
  const at::Tensor x = expected.at("input");  // (1, 64, 32) on 8×8
  auto [y, trace] = attn->forward_traced(x, attention::grid_layout(8, 8));
  agent_expect_parity("agent_pvt_attn out", y, expected.at("out"));
  for (const char* name : {"agent_tokens", "agent_attn", "q_attn"})
    agent_expect_parity(std::string("agent_pvt_attn ") + name,
                        trace->internal(std::string("agent.") + name), expected.at(name));
  for (const char* name : {"sr", "norm", "dwc"})
    agent_expect_parity(std::string("agent_pvt_attn out.") + name,
                        trace->internal(std::string("agent.") + name),
                        expected.at(std::string("out.") + name));
  agent_expect_parity("agent_pvt_attn in.proj", agent_in_proj_from_internals(*trace),
                      expected.at("in.proj"));
  const auto& keys = trace->group_of(0).keys;
  EXPECT_EQ(keys.key_h, 4);
  EXPECT_EQ(keys.cell, 2);
  // Without sr_ratio the module has no sr/norm: the fixture's are unexpected.
  auto bare = make("agent_pvt", 32, 2, {{"qkv_bias", 1}, {"agent_num", 16}, {"num_patches", 64}});
  EXPECT_THROW(load_from(*bare, weights, ""), nn::StateLoadError);
}

// Wider position biases than the defaults' 0.02 draws, so that their resizing matters.
void agent_randomise(attention::AttentionMechanism& m, uint64_t seed) {
  at::NoGradGuard no_grad;
  at::manual_seed(seed);
  for (auto& p : m.named_parameters()) p.value().normal_(0, 0.4);
}

// Rows = q_attn·agent_attn, positive and summing to 1; rows·v plus the dwc term through proj
// is the forward; the products, the explicit form and the added mixing agree with them.
void agent_expect_rows_rebuild_forward(attention::AttentionMechanism& m, const at::Tensor& x,
                                       const TokenLayout& layout) {
  auto [y, trace] = m.forward_traced(x, layout);
  const int64_t prefix = layout.num_prefix();
  at::Tensor mixed = at::zeros({x.size(0), trace->heads, layout.tokens(), trace->head_dim});
  for (int64_t b = 0; b < x.size(0); ++b)
    for (int64_t h = 0; h < trace->heads; ++h) {
      const at::Tensor rows = trace->matrix(b, h);
      EXPECT_GT(rows.min().item<double>(), 0.0);
      EXPECT_LE(max_abs_diff(rows.sum(1), at::ones({layout.tokens()})), 1e-5);
      EXPECT_LE(max_abs_diff(rows, at::matmul(trace->internal("agent.q_attn")[b][h],
                                              trace->internal("agent.agent_attn")[b][h])),
                1e-6);
      mixed[b][h] = rows_times_v(*trace, b, h);
      const at::Tensor probe = at::randn({layout.tokens(), 2});
      const at::Tensor spread = attention::rows_on_tokens(rows, trace->group_of(h).keys, layout);
      EXPECT_LE(max_abs_diff(trace->apply(b, h, probe), at::matmul(spread, probe)), 1e-5);
      EXPECT_LE(max_abs_diff(trace->apply_transposed(b, h, probe), at::matmul(spread.t(), probe)),
                1e-5);
    }
  at::Tensor merged = attention::merge_heads(mixed);
  merged.slice(1, prefix) += trace->internal("agent.dwc").flatten(2).transpose(1, 2);
  auto p = m.named_parameters();
  EXPECT_LE(max_abs_diff(at::linear(merged, p["proj.weight"], p["proj.bias"]), y), 1e-5);
  attention::TraceOptions options;
  options.explicit_attention = true;
  EXPECT_LE(max_abs_diff(m.forward_traced(x, layout, options).output, y), 1e-5);
  const auto ranks = trace->rank_matrices(0);
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0].name, "agent_values");
  EXPECT_EQ(ranks[0].matrices.size(1), m.config().int_option("agent_num"));
  // The dwc as added mixing (keys = tokens only): W_c·v_c + bias is the dwc term.
  const auto* source = dynamic_cast<const attention::AddedMixingSource*>(trace.get());
  ASSERT_NE(source, nullptr);
  if (trace->group_of(0).keys.cell != 1) return;
  const int64_t h = trace->heads - 1, c = trace->head_dim - 1, channel = h * trace->head_dim + c;
  const auto w = source->added_mixing(h, {c});
  ASSERT_EQ(w.size(), 1u);
  const at::Tensor v = trace->group_of(h).v[0][h].select(1, c).to(at::kDouble);
  const at::Tensor ours =
      at::matmul(w[0], v).slice(0, prefix) + p["dwc.bias"][channel].item<double>();
  EXPECT_LE(max_abs_diff(ours, trace->internal("agent.dwc")[0][channel].flatten()), 1e-5);
}

TEST(AgentAttention, RowsAreTheProductOfTheTwoSoftmaxesAndRebuildTheForward) {
  auto deit = make("agent", 24, 3, {{"agent_num", 4}, {"window", 6}});
  deit->eval();
  agent_randomise(*deit, 3);
  agent_expect_rows_rebuild_forward(*deit, random_tokens(2, 21, 24), agent_cls_layout(5, 4));
  agent_expect_rows_rebuild_forward(*deit, random_tokens(1, 20, 24), attention::grid_layout(5, 4));
  for (int64_t r : {1, 2}) {
    auto pvt = make("agent_pvt", 24, 3, {{"agent_num", 9}, {"num_patches", 36}, {"sr_ratio", r}});
    pvt->eval();
    agent_randomise(*pvt, 4);
    agent_expect_rows_rebuild_forward(*pvt, random_tokens(2, 24, 24), attention::grid_layout(6, 4));
  }
}

// SPEC_COMPARISON's formulas in float64, written out: 1-D linear interpolation (align_corners
// false) as an (out, in) matrix, adaptive average pooling as a (p, in) matrix.
at::Tensor agent_interp_matrix(int64_t in, int64_t out) {
  at::Tensor m = at::zeros({out, in}, at::kDouble);
  for (int64_t o = 0; o < out; ++o) {
    const double src = std::max((o + 0.5) * double(in) / double(out) - 0.5, 0.0);
    const int64_t lo = int64_t(std::floor(src)), hi = std::min(lo + 1, in - 1);
    m[o][lo] += 1.0 - (src - double(lo));
    m[o][hi] += src - double(lo);
  }
  return m;
}
at::Tensor agent_pool_matrix(int64_t in, int64_t p) {
  at::Tensor m = at::zeros({p, in}, at::kDouble);
  for (int64_t i = 0; i < p; ++i) {
    const int64_t lo = (i * in) / p, hi = ((i + 1) * in + p - 1) / p;
    m[i].slice(0, lo, hi).fill_(1.0 / double(hi - lo));
  }
  return m;
}

at::Tensor agent_spec_reference(attention::AttentionMechanism& m, const at::Tensor& x_in,
                                const TokenLayout& layout, bool pvt) {
  std::map<std::string, at::Tensor> p;
  for (const auto& t : m.named_parameters()) p[t.key()] = t.value().detach().to(at::kDouble);
  const at::Tensor x = x_in.to(at::kDouble);
  const int64_t batch = x.size(0), c = x.size(2), heads = m.config().heads, d = c / heads;
  const int64_t hh = layout.height, ww = layout.width, pre = layout.num_prefix();
  const int64_t agents = m.config().int_option("agent_num"), side = int64_t(std::sqrt(agents));
  const int64_t r = pvt ? m.config().int_option("sr_ratio") : 1, kh = hh / r, kw = ww / r;
  auto heads_of = [&](const at::Tensor& t) {
    return t.reshape({batch, t.size(1), heads, d}).permute({0, 2, 1, 3});
  };
  at::Tensor q, k, v;
  if (pvt) {
    q = at::linear(x, p["q.weight"], p["q.bias"]);
    at::Tensor src = x;
    if (r > 1) {
      const at::Tensor grid = x.transpose(1, 2).reshape({batch, c, hh, ww});
      src = at::conv2d(grid, p["sr.weight"], p["sr.bias"], {r, r}).flatten(2).transpose(1, 2);
      src = at::layer_norm(src, {c}, p["norm.weight"], p["norm.bias"], 1e-5);
    }
    const at::Tensor kv = at::linear(src, p["kv.weight"], p["kv.bias"]);
    k = kv.slice(2, 0, c), v = kv.slice(2, c);
  } else {
    const at::Tensor qkv = at::linear(x, p["qkv.weight"], p["qkv.bias"]);
    q = qkv.slice(2, 0, c), k = qkv.slice(2, c, 2 * c), v = qkv.slice(2, 2 * c);
  }
  const at::Tensor q_grid = q.slice(1, pre).reshape({batch, hh, ww, c});
  const at::Tensor ag = at::einsum(
      "iy,jx,byxc->bijc", {agent_pool_matrix(hh, side), agent_pool_matrix(ww, side), q_grid});
  const at::Tensor a = heads_of(ag.reshape({batch, agents, c}));
  const at::Tensor qh = heads_of(q), kh_ = heads_of(k), vh = heads_of(v);
  // bias_a (h, A, kh·kw) and bias_q (h, H·W, A); window-sized biases resized along their axis.
  const auto rk_h = agent_interp_matrix(p["ah_bias"].size(3), kh);
  const auto rk_w = agent_interp_matrix(p["aw_bias"].size(4), kw);
  at::Tensor bias_a = at::einsum("yi,haij,xj->hayx", {agent_interp_matrix(7, kh), p["an_bias"],
                                                      agent_interp_matrix(7, kw)}) +
                      at::einsum("yi,hai->hay", {rk_h, p["ah_bias"][0].squeeze(-1)}).unsqueeze(-1) +
                      at::einsum("xi,hai->hax", {rk_w, p["aw_bias"][0].squeeze(-2)}).unsqueeze(-2);
  bias_a = bias_a.reshape({heads, agents, kh * kw});
  at::Tensor bias_q =
      at::einsum("yi,haij,xj->hyxa",
                 {agent_interp_matrix(7, hh), p["na_bias"], agent_interp_matrix(7, ww)}) +
      at::einsum("yi,hia->hya",
                 {agent_interp_matrix(p["ha_bias"].size(2), hh), p["ha_bias"][0].squeeze(-2)})
          .unsqueeze(2) +
      at::einsum("xi,hia->hxa",
                 {agent_interp_matrix(p["wa_bias"].size(3), ww), p["wa_bias"][0].squeeze(-3)})
          .unsqueeze(1);
  bias_q = bias_q.reshape({heads, hh * ww, agents});
  if (pre > 0) {
    // Every prefix token as the reference's class token (attnlab's extension beyond one).
    bias_a = at::cat({p["ac_bias"][0].expand({heads, agents, pre}), bias_a}, -1);
    bias_q = at::cat({p["ca_bias"][0].expand({heads, pre, agents}), bias_q}, 1);
  }
  const double scale = 1.0 / std::sqrt(double(d));
  const at::Tensor agent_attn =
      at::softmax(at::matmul(a, kh_.transpose(-2, -1)) * scale + bias_a, -1);
  const at::Tensor q_attn = at::softmax(at::matmul(qh, a.transpose(-2, -1)) * scale + bias_q, -1);
  at::Tensor out =
      at::matmul(q_attn, at::matmul(agent_attn, vh)).permute({0, 2, 1, 3}).reshape({batch, -1, c});
  at::Tensor v_img = v.slice(1, pre).transpose(1, 2).reshape({batch, c, kh, kw});
  if (r > 1)
    v_img = at::einsum("yi,bcij,xj->bcyx",
                       {agent_interp_matrix(kh, hh), v_img, agent_interp_matrix(kw, ww)});
  const at::Tensor dwc =
      at::conv2d(v_img, p["dwc.weight"], p["dwc.bias"], {1, 1}, {1, 1}, {1, 1}, c);
  out.slice(1, pre) += dwc.flatten(2).transpose(1, 2);
  return at::linear(out, p["proj.weight"], p["proj.bias"]);
}

TEST(AgentAttention, OtherGridsAndAgentCountsFollowTheSpecFormulas) {
  // DeiT form on a 5×7 grid with biases built for window 6 (resized), 4 agents (2×2 cells
  // that overlap: 2 ∤ 5, 2 ∤ 7), with the class token, without it, and with cls + dist
  // (both given the class token's biases).
  auto deit = make("agent", 16, 2, {{"agent_num", 4}, {"window", 6}, {"qkv_bias", 1}});
  deit->eval();
  agent_randomise(*deit, 11);
  TokenLayout two = agent_cls_layout(5, 7);
  two.prefix = {"cls", "dist"};
  for (const TokenLayout& l : {agent_cls_layout(5, 7), attention::grid_layout(5, 7), two}) {
    const at::Tensor x = random_tokens(2, l.tokens(), 16);
    EXPECT_LE(max_abs_diff(deit->forward(x, l), agent_spec_reference(*deit, x, l, false)), 1e-5)
        << l.describe();
  }
  // PVT form, R = 2 on 6×4 (3×2 keys), 9 agents pooled from 6×4, biases for window 5.
  auto pvt = make("agent_pvt", 16, 2,
                  {{"agent_num", 9}, {"num_patches", 25}, {"sr_ratio", 2}, {"qkv_bias", 1}});
  pvt->eval();
  agent_randomise(*pvt, 12);
  EXPECT_EQ(pvt->named_parameters()["ah_bias"].sizes(), (at::IntArrayRef{1, 2, 9, 2, 1}));
  const TokenLayout l = attention::grid_layout(6, 4);
  const at::Tensor x = random_tokens(2, 24, 16);
  EXPECT_LE(max_abs_diff(pvt->forward(x, l), agent_spec_reference(*pvt, x, l, true)), 1e-5);
}

TEST(AgentAttention, RefusesWhatItCannotRunWithAMessage) {
  const auto message_of = [](const std::function<void()>& f) -> std::string {
    try {
      f();
    } catch (const attention::AttentionError& e) {
      return e.what();
    }
    return "";
  };
  std::string what = message_of([] { make("agent", 16, 2, {{"agent_num", 8}}); });
  EXPECT_NE(what.find("agent_num"), std::string::npos) << what;
  what = message_of([] {
    make("agent_pvt", 16, 2)->forward(at::randn({1, 17, 16}), agent_cls_layout(4, 4));
  });
  EXPECT_NE(what.find("agent_pvt"), std::string::npos) << what;
  EXPECT_NE(what.find("prefix"), std::string::npos) << what;
  what = message_of([] {
    make("agent_pvt", 16, 2, {{"sr_ratio", 2}})
        ->forward(at::randn({1, 20, 16}), attention::grid_layout(5, 4));
  });
  EXPECT_NE(what.find("sr_ratio 2"), std::string::npos) << what;
  EXPECT_NE(what.find("5×4"), std::string::npos) << what;
  what = message_of([] { make("agent_pvt", 16, 2, {{"sr_ratio", 4}, {"num_patches", 9}}); });
  EXPECT_NE(what.find("sr_ratio 4"), std::string::npos) << what;
}

}  // namespace
}  // namespace attnlab::testing
