// Anchor attention (AnchorFormer, SPEC §1.6): every token is softly assigned to M learned
// anchors, and tokens exchange information only through the anchors, in O(N·M·d).
//   parameters  x_to_emb: Linear(C, 2·h·d, no bias) -> [E | V], head-major; E is ONE shared
//               query/key embedding. dist_anchor_B: Linear(d, M, no bias); its weight rows
//               (M, d) are the anchors, shared by all heads. to_out.0: Linear(h·d, C) — a
//               child "to_out" holding a child "0", as the reference's nn.Sequential. As in
//               the reference, with a single head (d == C) there is no to_out at all: the
//               output is the merged heads unchanged, and the module has no to_out.* keys.
//   options     anchors (M, default 30, >= 1)
//   forward     A = softmax_anchors(E Bᵀ · d^-0.5) (B, h, N, M); Δ_m = Σ_n A[n, m];
//               Δ⁻¹ = 1/Δ with inf -> 0 (an anchor no token uses contributes nothing);
//               out = A · diag(Δ⁻¹) · (Aᵀ V); merge heads; to_out.0
//   trace       one head group "all": q = k = E (B, h, N, d), v (B, h, N, d); internals
//               "anchor.A"         (B, h, N, M)  the token-to-anchor assignment (rows sum to 1)
//               "anchor.delta"     (B, h, M)     Δ, each anchor's total assignment mass
//               "anchor.delta_inv" (B, h, M)     Δ⁻¹ as used by the forward (inf -> 0)
//   rows        S_i = A_i · diag(Δ⁻¹) · Aᵀ over all N tokens (prefix tokens included),
//               computed in O(N·M) per row from the stored A; S is row-stochastic.
//   products    S·x = Sᵀ·x (S is symmetric) in O(N·M·c), never forming S.
//   explicit    out = to_out.0(merge(S·v))
#include <ATen/ATen.h>

#include <cmath>

#include "core/attention/capabilities.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"
#include "core/attention/head_outputs.h"

namespace attnlab::attention {
namespace {

class AnchorTrace : public AttentionTrace, public MapFactorSource {
 public:
  // S = (A·diag(Δ⁻¹))·Aᵀ: rank at most M, the number of anchors.
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const at::Tensor a = internal("anchor.A")[b][head];  // (N, M)
    return MapFactors{a * internal("anchor.delta_inv")[b][head], a};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const int64_t head = g.first_head + h;
    const at::Tensor a = internal("anchor.A")[b][head];                     // (N, M)
    const at::Tensor inv = internal("anchor.delta_inv")[b][head];           // (M,)
    return at::matmul(a.index_select(0, q_rows) * inv, a.transpose(0, 1));  // (len, N)
  }

  // S = A diag(Δ⁻¹) Aᵀ is symmetric, so S·x = Sᵀ·x = A(Δ⁻¹ ⊙ (Aᵀx)): O(N·M·c).
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    (void)transposed;
    const int64_t head = g.first_head + h;
    const at::Tensor a = internal("anchor.A")[b][head];                         // (N, M)
    const at::Tensor inv = internal("anchor.delta_inv")[b][head].unsqueeze(1);  // (M, 1)
    return at::matmul(a, inv * at::matmul(a.t(), x));
  }
};

class AnchorAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    // One head has no output projection (the reference drops it): nothing to zero it in.
    if (config().heads <= 1) return {};
    return head_major_columns("to_out.0.weight", config().heads, config().head_dim());
  }
  explicit AnchorAttention(const MechanismConfig& c) : AttentionMechanism("anchor", c) {
    const int64_t d = c.head_dim();
    const int64_t anchors = c.int_option("anchors");
    if (anchors < 1)
      throw AttentionError("anchor: the number of anchors must be at least 1, got " +
                           std::to_string(anchors));
    x_to_emb_ = add_layer<LinearLayer>(*this, "x_to_emb", c.dim, 2 * c.heads * d, false);
    anchors_ = add_layer<LinearLayer>(*this, "dist_anchor_B", d, anchors, false);
    // The reference drops the output projection when heads == 1 and d == C; with d = C/h
    // that is exactly the single-head case.
    if (c.heads > 1) {
      auto to_out = register_module("to_out", std::make_shared<torch::nn::Module>());
      to_out_ = add_layer<LinearLayer>(*to_out, "0", c.heads * d, c.dim, true);
    }
    scale_ = 1.0 / std::sqrt(static_cast<double>(d));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t heads = config().heads;
    auto parts = (*x_to_emb_)(x).chunk(2, -1);
    at::Tensor e = split_heads(parts[0], heads);  // (B, h, N, d)
    at::Tensor v = split_heads(parts[1], heads);
    at::Tensor a = at::softmax((*anchors_)(e)*scale_, -1);  // (B, h, N, M)
    at::Tensor delta = a.sum(-2);                           // (B, h, M)
    at::Tensor inv = at::reciprocal(delta);
    inv = inv.masked_fill(at::isinf(inv), 0.0);
    // Same association as the reference: (Aᵀ V), scaled per anchor, then A ·.
    at::Tensor out = at::matmul(a, inv.unsqueeze(-1) * at::matmul(a.transpose(-2, -1), v));
    if (request) {
      auto trace = std::make_shared<AnchorTrace>();
      init_trace(*trace, x, layout, *request);
      trace->groups.push_back(all_heads_group(*trace, heads, e, e, v));
      trace->internals["anchor.A"] = trace->keep(a);
      trace->internals["anchor.delta"] = trace->keep(delta);
      trace->internals["anchor.delta_inv"] = trace->keep(inv);
      if (wants_explicit(request)) out = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    out = merge_heads(out);
    return to_out_ ? (*to_out_)(out) : out;
  }

 private:
  std::shared_ptr<LinearLayer> x_to_emb_, anchors_, to_out_;
  double scale_ = 1.0;
};

}  // namespace

MechanismInfo anchor_mechanism() {
  MechanismInfo info;
  info.name = "anchor";
  info.linear_in_tokens = true;
  info.capabilities = {capability::kAnchorAssignment};
  info.summary = "anchor attention (AnchorFormer): tokens mix through M learned anchors, O(N·M·d)";
  info.options = {{"anchors", OptionSpec::Kind::Integer, 30, 1, 1e9, "number of anchors M"}};
  info.small_model_options = {{"anchors", 16}};  // 196 tokens: fewer anchors than the 30 default
  // Tokens to anchors and anchors to tokens: two N×M matrices per head.
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& l) {
    return 2.0 * static_cast<double>(c.heads) * static_cast<double>(l.tokens()) *
           c.option("anchors");
  };
  info.create = [](const MechanismConfig& c) { return std::make_shared<AnchorAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
