// Cross-covariance attention (XCiT, El-Nouby et al. 2021; SPEC_COMPARISON "Cross-covariance
// attention", facebookresearch/xcit XCA): attention between CHANNELS, not tokens. Per head,
// q and k are L2-normalised along the token axis, A = softmax((q̂ᵀk̂)·τ) is a d×d
// channel-to-channel map, and every token's output is A applied to its own value vector.
// O(N·d²) per head; no d^-0.5 (the learned temperature τ scales instead).
//   parameters  qkv: Linear(C, 3C) rows [q | k | v], head-major; proj: Linear(C, C);
//               temperature: Parameter (h, 1, 1) (τ, initialised to 1)
//   options     qkv_bias (default 0, the reference class's; the XCiT models and DeiT with xca
//               through the vit config pass 1)
//   forward     q̂, k̂ = q, k / max(‖·‖ over the N tokens, 1e-12) per channel;
//               A = softmax over its last axis of (q̂ᵀk̂)·τ (d×d), out_i = A·v_i; merge; proj
//   trace       one head group "all": q̂, k̂ (B, h, N, d) normalised along the tokens, and
//               v = the values after the channel map (token i: A·v_i), the vectors the
//               token mixing below really mixes; internals "xca.attn" (B, h, d, d), A (the
//               reference's "attn"), and "xca.v" (B, h, N, d), the values before A
//   rows        the token-to-token attention is the IDENTITY: given A, token i's output
//               reads only its own value vector (mixed across channels), so a_ij = [i = j].
//               Tokens interact only through A, which is computed from statistics over all
//               tokens (q̂ᵀk̂ sums over them); the map worth looking at is A itself, offered
//               as capability "channel map" (rank_matrices "channel_map", (h, d, d)).
//   products    A·x = x and Aᵀ·y = y (the identity), no row formed
//   explicit    out = proj(merge(rows·v)) with the one-hot rows as leaves that require
//               grad: the identity depends on nothing, but gradient rollout needs
//               ∂out/∂rows, which is then defined.
#include <ATen/ATen.h>

#include "core/attention/capabilities.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/attention/head_outputs.h"

namespace attnlab::attention {
namespace {

constexpr double kNormalizeEps = 1e-12;  // F.normalize's clamp on the norm

class XcaTrace : public AttentionTrace {
 public:
  // A, the d×d map every token's value passes through: XCA's counterpart of a KV buffer.
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"channel_map", internal("xca.attn")[b]}};
  }

 protected:
  // One-hot rows: query token i attends to itself only.
  at::Tensor compute_rows(int64_t, const HeadGroup& g, int64_t,
                          const at::Tensor& q_rows) const override {
    at::Tensor rows = at::zeros({q_rows.size(0), g.keys.size()}, g.q.options());
    rows.scatter_(1, q_rows.unsqueeze(1), 1.0);
    // Only the explicit form differentiates with respect to the rows (keeps_history).
    return keeps_history ? rows.requires_grad_(true) : rows;
  }

  at::Tensor compute_apply(int64_t, const HeadGroup&, int64_t, const at::Tensor& x,
                           bool) const override {
    return x.clone();
  }
};

// (B, h, N, d) normalised along the token axis, as F.normalize(dim=-1) on (B, h, d, N).
at::Tensor normalise_over_tokens(const at::Tensor& x) {
  return x / x.norm(2, /*dim=*/-2, /*keepdim=*/true).clamp_min(kNormalizeEps);
}

class CrossCovarianceAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit CrossCovarianceAttention(const MechanismConfig& c) : AttentionMechanism("xca", c) {
    temperature_ = register_parameter("temperature", at::ones({c.heads, 1, 1}));
    qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t heads = config().heads;
    auto [q_raw, k_raw, v] = split_qkv((*qkv_)(x), heads);  // (B, h, N, d)
    const at::Tensor q = normalise_over_tokens(q_raw);
    const at::Tensor k = normalise_over_tokens(k_raw);
    // A[c, e] = softmax_e(τ Σ_t q̂_tc k̂_te): channel c of the output reads channel e of v.
    const at::Tensor attn = (at::matmul(q.transpose(-2, -1), k) * temperature_).softmax(-1);
    at::Tensor out = at::matmul(v, attn.transpose(-2, -1));  // token i: A·v_i, (B, h, N, d)
    if (request) {
      auto trace = std::make_shared<XcaTrace>();
      init_trace(*trace, x, layout, *request);
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, out));
      trace->internals["xca.attn"] = trace->keep(attn);
      trace->internals["xca.v"] = trace->keep(v);
      if (wants_explicit(request)) out = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out));
  }

 private:
  at::Tensor temperature_;
  std::shared_ptr<LinearLayer> qkv_, proj_;
};

}  // namespace

MechanismInfo xca_mechanism() {
  MechanismInfo info;
  info.name = "xca";
  info.linear_in_tokens = true;
  // The channel map is also what the rank analysis reads (rank_matrices).
  info.capabilities = {capability::kKvBuffer, capability::kChannelMap};
  info.summary =
      "cross-covariance attention (XCiT): a d×d softmax map over channels per head, "
      "token-to-token mixing is the identity, O(N·d²)";
  info.options = {{"qkv_bias", OptionSpec::Kind::Flag, 0, 0, 1, "bias on the qkv projection"}};
  // The reference XCA on a token sequence (it needs no grid); the fixture's arch is "xca".
  ReferenceModule module;
  module.arch = "xca";
  module.fixture = "xca_attn";
  module.args = {{"qkv_bias", "qkv_bias"}};
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) {
    return std::make_shared<CrossCovarianceAttention>(c);
  };
  return info;
}

}  // namespace attnlab::attention
