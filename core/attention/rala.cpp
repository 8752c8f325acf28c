// RALA, rank-augmented linear attention (SPEC §1.4): RAVLT stages 1–2. The reference module
// (GateLinearAttentionNoSilu) is NCHW; ours takes the grid's tokens (B, N, C), N = L = H·W.
//   parameters  qkvo: Conv2d(C, 4C, 1) -> [q | k | v | o], each C wide, head-major;
//               lepe: Conv2d(C, C, 5, padding 2, groups C); proj: Conv2d(C, C, 1); all biased
//   options     none. Grid only (RoPE); the head dim must be a multiple of 4.
//   forward     κ = elu + 1 on q, k; w = softmax_j(d^-0.5 · mean_i(κq_i) · κk_j);
//               k'_j = κk_j · w_j · L; z_i = 1 / (κq_i · mean_j k'_j + 1e-6) (un-rotated);
//               out_i = z_i · R(κq_i) (R(k')ᵀ/√L)(v/√L); to NCHW; + lepe(v); ⊙ o; proj.
//   trace       group "all": q = κ(q), k = κ(k) (before reweighting, not rotated), v.
//               internals (L = N tokens):
//                 rala.w        (B, h, L)    token weights w; α = L·w sums to L
//                 rala.kv       (B, h, d, d) Σ_j α_j κ(k_j)ᵀ v_j, the rank-analysis KV buffer
//                 rala.kv_plain (B, h, d, d) Σ_j κ(k_j)ᵀ v_j, the un-augmented baseline (α = 1)
//                 rala.y        (B, h, L, d) attention output + lepe: what the gate multiplies
//                 rala.o        (B, h, L, d) the gate (raw, no activation)
//                 rala.lepe     (B, h, L, d) lepe(v)
//   rows        a_ij = w_j (R(q_i)·R(k_j)) / (q_i · Σ_m w_m k_m + 1e-6), κ features; with RoPE a
//               row need not sum to 1 exactly. out = proj(((rows·v) + lepe) ⊙ o) per head.
//               R(q), R(k) are recomputed for the rows asked (O(N·d)), and the gated features
//               y ⊙ o are derived by whoever needs them: a trace stores nothing it can derive
//               cheaply, which keeps capture within a few percent of the forward.
//   products    A·x and Aᵀ·y (AttentionTrace::apply) in O(N·d·c), rotating all of q and k once.
//   explicit    out = proj(((rows·v) + lepe) ⊙ o), as the rows line says.
#include <ATen/ATen.h>

#include <cmath>
#include <string>

#include "core/attention/capabilities.h"
#include "core/attention/kernels.h"
#include "core/attention/map_factors.h"
#include "core/attention/ravlt_shell.h"
#include "core/attention/registry.h"
#include "core/attention/rope.h"
#include "core/attention/head_outputs.h"

namespace attnlab::attention {
namespace {

class RalaTrace : public AttentionTrace, public MapFactorSource, public AddedMixingSource {
 public:
  at::Tensor lepe_weight;  // (C, 1, 5, 5), channel = head·d + c

  // Rows R(q_i)·R(K)ᵀ·diag(w) / (q_i·Σ_m w_m k_m + 1e-6): left = R(Q) / den, right = diag(w)·R(K).
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    const at::Tensor w = internal("rala.w")[b][head];  // (L)
    const at::Tensor q = g.q[b][head - g.first_head], k = g.k[b][head - g.first_head];
    const at::Tensor denom = (at::matmul(q, at::matmul(w, k)) + 1e-6).unsqueeze(1);
    const RopeTables rope = rope_tables(layout.height, layout.width, head_dim, k.options());
    return MapFactors{apply_rope(q, rope) / denom, apply_rope(k, rope) * w.unsqueeze(1)};
  }

  // LePE: a 5×5 depthwise conv on v, its own kernel for every channel of every head.
  std::vector<at::Tensor> added_mixing(int64_t head,
                                       const std::vector<int64_t>& channels) const override {
    std::vector<at::Tensor> out;
    const int64_t pad = lepe_weight.size(-1) / 2;
    for (int64_t c : channels)
      out.push_back(conv_mixing_matrix(lepe_weight[head * head_dim + c][0], layout.height,
                                       layout.width, pad, pad));
    return out;
  }
  std::string added_mixing_name() const override { return "lepe"; }

  // The KV buffer Σα_j κ(k_j)ᵀv_j, the same without α, and after the output the gated
  // output y ⊙ o (rala.y already includes lepe(v): exactly the tensor the gate multiplies).
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal("rala.kv")[b]},
            {"kv_plain", internal("rala.kv_plain")[b]},
            {"output_gated", internal("rala.y")[b] * internal("rala.o")[b], true}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const at::Tensor w = internal("rala.w")[b][h];  // (L)
    const at::Tensor k = g.k[b][h];
    const at::Tensor q = g.q[b][h].index_select(0, q_rows);
    const at::Tensor denom = at::matmul(q, at::matmul(w, k)) + 1e-6;  // q_i · Σ_m w_m k_m
    const RopeTables rope = rope_tables(layout.height, layout.width, head_dim, k.options());
    const at::Tensor q_rot =
        apply_rope(q, rope.sin.index_select(0, q_rows), rope.cos.index_select(0, q_rows));
    const at::Tensor num = at::matmul(q_rot, apply_rope(k, rope).transpose(0, 1)) * w;
    return num / denom.unsqueeze(1);
  }

  // A = diag(1/den) R(Q) R(K)ᵀ diag(w), so A·x = R(Q)(R(K)ᵀ(w⊙x))/den and
  // Aᵀ·y = w⊙(R(K)(R(Q)ᵀ(y/den))): O(N·d·c), no row formed.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor w = internal("rala.w")[b][h].unsqueeze(1);  // (L, 1)
    const at::Tensor q = g.q[b][h], k = g.k[b][h];
    // The denominator from the un-rotated q, exactly as compute_rows has it.
    const at::Tensor denom = (at::matmul(q, at::matmul(w.squeeze(1), k)) + 1e-6).unsqueeze(1);
    const RopeTables rope = rope_tables(layout.height, layout.width, head_dim, k.options());
    const at::Tensor q_rot = apply_rope(q, rope), k_rot = apply_rope(k, rope);
    if (transposed) return w * at::matmul(k_rot, at::matmul(q_rot.t(), x / denom));
    return at::matmul(q_rot, at::matmul(k_rot.t(), w * x)) / denom;
  }
};

class RalaAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit RalaAttention(const MechanismConfig& c)
      : AttentionMechanism("rala", c), shell_(*this, c, "rala") {}

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const RavltParts p = shell_.split(x, layout);
    const int64_t d = config().head_dim();
    const int64_t len = p.height * p.width;  // L in the SPEC
    const at::Tensor q = elu_feature(p.q);
    const at::Tensor k = elu_feature(p.k);

    // Query-guided key weights (B, h, 1, L), then k'_j = k_j · w_j · L.
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    const at::Tensor w = at::softmax(at::matmul(q.mean(-2, true), k.transpose(-2, -1)) * scale, -1);
    const at::Tensor k_w = k * w.transpose(-2, -1) * static_cast<double>(len);

    const RopeTables rope = rope_tables(p.height, p.width, d, x.options());
    const at::Tensor q_rot = apply_rope(q, rope);
    // The normaliser uses the un-rotated q and reweighted k, as the reference does.
    const at::Tensor z = at::reciprocal(at::matmul(q, k_w.mean(-2, true).transpose(-2, -1)) + 1e-6);
    const double inv_sqrt_l = 1.0 / std::sqrt(static_cast<double>(len));
    const at::Tensor kv =
        at::matmul(apply_rope(k_w, rope).transpose(-2, -1) * inv_sqrt_l, p.v * inv_sqrt_l);
    at::Tensor mixed = at::matmul(q_rot, kv) * z;  // (B, h, L, d)

    std::shared_ptr<RalaTrace> trace;
    if (request) {
      trace = std::make_shared<RalaTrace>();
      init_trace(*trace, x, layout, *request);
      trace->groups.push_back(all_heads_group(*trace, p.heads, q, k, p.v));
      auto& in = trace->internals;
      in["rala.w"] = trace->keep(w.squeeze(-2));
      in["rala.kv"] = trace->keep(at::matmul(k_w.transpose(-2, -1), p.v));
      in["rala.kv_plain"] = trace->keep(at::matmul(k.transpose(-2, -1), p.v));
      in["rala.o"] = trace->keep(p.per_head(p.o_img));
      in["rala.lepe"] = trace->keep(p.per_head(p.lepe_img));
      trace->lepe_weight = shell_.lepe_weight().detach();
      if (wants_explicit(request)) mixed = explicit_mix(*trace);
    }
    const at::Tensor y_img = p.to_image(mixed) + p.lepe_img;
    if (trace) {
      trace->internals["rala.y"] = trace->keep(p.per_head(y_img));
      request->trace = std::move(trace);
    }
    return shell_.project(p, y_img * p.o_img);
  }

 private:
  RavltShell shell_;
};

}  // namespace

MechanismInfo rala_mechanism() {
  MechanismInfo info;
  info.name = "rala";
  info.summary = "rank-augmented linear attention with RoPE, LePE and gate (RAVLT stages 1-2)";
  info.needs_grid = true;
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer};
  info.create = [](const MechanismConfig& c) { return std::make_shared<RalaAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
