// Polarity-aware linear attention (PolaFormer, PVT form; Meng et al. ICLR 2025;
// SPEC_COMPARISON "PolaFormer"), as ZacharyMeng/PolaFormer's PolaLinearAttention computes it.
//   parameters  power (1, h, 1, d); scale (1, 1, C); positional_encoding (1, num_patches/R², C);
//               qg: Linear(C, 2C) rows [q | g]; kv: Linear(C, 2C) rows [k | v]; proj:
//               Linear(C, C); with sr_ratio R > 1: sr: Conv2d(C, C, R, stride R) and norm:
//               LayerNorm(C, eps 1e-5); dwc: depthwise Conv2d(d, d, kernel, pad kernel//2,
//               bias), shared by every head. qkv_bias applies to qg and kv.
//   options     alpha α (4; the paper also reports 3, 5, 7), kernel_size (5, odd), sr_ratio R
//               (1), qkv_bias (0, the reference default; its PVT models pass 1), num_patches
//               (0: no positional encoding, any grid — what a freshly built reference module
//               computes, its encoding starting at zero; > 0: the reference's parameter, the
//               layer must then have exactly num_patches tokens). d = C/h must be even.
//   forward     q, g = qg(x); k, v from the tokens (R > 1: from LayerNorm(sr(grid)), n =
//               (H/R)(W/R) keys); k += positional_encoding; q, k /= softplus(scale); per head
//               p = 1 + α·sigmoid(power) per channel, φq = [ReLU(q)^p | ReLU(−q)^p],
//               φq_opp = its halves swapped, φk = [ReLU(k)^p | ReLU(−k)^p] (2d wide).
//               x_sim_i = φq_i·[(Σ_j φk_jᵀ v₁_j)/n] / (φq_i·mean_j φk_j + 1e-6) with v₁ the
//               first d/2 value channels, x_opp likewise with φq_opp and v₂ the second half;
//               out = [x_sim | x_opp] + dwc(v) with v as (B·h, d, H, W) (R > 1: v linearly
//               interpolated n → N along the token index first); heads merged; ⊙ g; proj.
//   grid        pure grid only; R > 1 needs R to divide H and W (the pooled keys must tile the
//               grid for the trace's key space; the reference would drop the remainder).
//   trace       heads 2h in two groups, because each head mixes its two value halves with two
//               different maps: "sim" (trace heads 0 … h−1, head i's same-sign map, q = φq,
//               v = v₁) and "opp" (trace heads h … 2h−1, head i's opposite-sign map, q =
//               φq_opp, v = v₂); both k = φk (B, h, n, 2d); keys the grid (R > 1: the
//               (H/R)×(W/R) pooled grid, cell R). The trace's head_dim is d/2: each
//               trace head's v (and head_output) holds half of a head's d channels. Internals:
//                 pola.phi_q   (B, h, N, 2d) φq (the fixture's phi_q)
//                 pola.phi_k   (B, h, n, 2d) φk
//                 pola.kv_sim  (B, h, 2d, d/2) Σ φkᵀ v₁ / n, the same-sign KV buffer (rank)
//                 pola.kv_opp  (B, h, 2d, d/2) Σ φkᵀ v₂ / n, the opposite-sign one (rank)
//                 pola.k_mean  (B, h, 2d) mean φk
//                 pola.dwc     (B, h, N, d) dwc(v), added after the mixing
//                 pola.gate    (B, N, C) g, multiplying the merged heads
//                 pola.sr      (B, C, H/R, W/R), pola.norm (B, n, C)   (R > 1 only)
//   rows        a_ij = φq_i·φk_j / Σ_m φq_i·φk_m with the group's φq (non-negative, sum to 1;
//               the 1e-6 is not in the row; a row whose sum is 0 stays 0, as its output is).
//               dwc and the gate are not part of the rows: they describe the mixing only.
//   products    A·x, Aᵀ·y in O(N·d·c) through φQ, φK (R = 1; pooled keys use rows).
//   explicit    x_half = rows·v_half · den/(den + 1e-6), den = φq_i·mean φk per group;
//               [x_sim | x_opp] + dwc; merge; ⊙ g; proj
//   heads       head_columns follow the trace's 2h heads: trace head i < h is proj's inputs
//               [i·d, i·d + d/2), trace head h + i is [i·d + d/2, (i + 1)·d). No added-mixing
//               source for the rank analysis: dwc mixes all d channels of a head, each trace
//               head has only d/2 of them.
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "core/attention/capabilities.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

constexpr double kPolaEps = 1e-6;  // the reference's, in the denominator

// Divisors for rows φq·φkᵀ: the row sums, with a zero sum (features are >= 0, so all scores
// are 0) replaced by 1 so that such a row stays 0 and no 0/0 reaches a gradient.
at::Tensor pola_safe_sums(const at::Tensor& sums) {
  return at::where(sums > 0, sums, at::ones_like(sums));
}

class PolaTrace : public AttentionTrace, public MapFactorSource {
 public:
  // Rows φq_i·φKᵀ / (φq_i·Σφk): left = φQ / den, right = φK (rank <= 2d).
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    const at::Tensor q = g.q[b][head - g.first_head], k = g.k[b][head - g.first_head];
    return MapFactors{q / pola_safe_sums(at::matmul(q, k.sum(0)).unsqueeze(1)), k};
  }

  // Both KV buffers in the trace's head order: the h same-sign ones, then the opposite-sign.
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", at::cat({internal("pola.kv_sim")[b], internal("pola.kv_opp")[b]}, 0)}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const at::Tensor scores = at::matmul(g.q[b][h].index_select(0, q_rows), g.k[b][h].t());
    return scores / pola_safe_sums(scores.sum(-1, /*keepdim=*/true));
  }

  // A = diag(1/den) φQ φKᵀ with den = φQ·Σφk, the rows' sums.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];
    const at::Tensor den = pola_safe_sums(at::matmul(q, k.sum(0)).unsqueeze(1));
    if (transposed) return at::matmul(k, at::matmul(q.t(), x / den));
    return at::matmul(q, at::matmul(k.t(), x)) / den;
  }
};

class PolaAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  // One entry per trace head: the same-sign maps feed each head's first d/2 channels of
  // proj, the opposite-sign maps its last d/2 (dwc and gate on those channels go with them).
  std::vector<HeadColumns> head_columns() const override {
    const int64_t heads = config().heads, d = config().head_dim();
    std::vector<HeadColumns> out;
    for (int64_t half = 0; half < 2; ++half)
      for (int64_t h = 0; h < heads; ++h)
        out.push_back({"proj.weight", h * d + half * d / 2, d / 2});
    return out;
  }
  explicit PolaAttention(const MechanismConfig& c) : AttentionMechanism("pola", c) {
    const int64_t kernel = c.int_option("kernel_size");
    if (kernel % 2 == 0)
      throw AttentionError("pola: option 'kernel_size' = " + std::to_string(kernel) +
                           " must be odd (dwc pads kernel//2 to keep the grid)");
    const int64_t dim = c.dim, d = c.head_dim();
    if (d % 2 != 0)
      throw AttentionError("pola: the head dimension C/heads = " + std::to_string(d) +
                           " must be even (each head's values split into two halves)");
    sr_ = c.int_option("sr_ratio");
    patches_ = c.int_option("num_patches");
    if (patches_ > 0 && patches_ / (sr_ * sr_) < 1)
      throw AttentionError("pola: num_patches = " + std::to_string(patches_) +
                           " leaves no key for sr_ratio " + std::to_string(sr_));
    alpha_ = c.option("alpha");
    const bool bias = c.flag("qkv_bias");
    // The reference's order: its own parameters first, then qg, kv, proj, sr, norm, dwc.
    power_ = register_parameter("power", at::zeros({1, c.heads, 1, d}));
    scale_ = register_parameter("scale", at::zeros({1, 1, dim}));
    if (patches_ > 0)
      position_ =
          register_parameter("positional_encoding", at::zeros({1, patches_ / (sr_ * sr_), dim}));
    qg_ = add_layer<LinearLayer>(*this, "qg", dim, 2 * dim, bias);
    kv_ = add_layer<LinearLayer>(*this, "kv", dim, 2 * dim, bias);
    proj_ = add_layer<LinearLayer>(*this, "proj", dim, dim, true);
    if (sr_ > 1) {
      Conv2dLayer::Shape s;
      s.in = s.out = dim;
      s.kernel = s.stride = {sr_, sr_};
      reduce_ = add_layer<Conv2dLayer>(*this, "sr", s);
      norm_ = add_layer<LayerNormLayer>(*this, "norm", dim, 1e-5);
    }
    Conv2dLayer::Shape s;
    s.in = s.out = s.groups = d;
    s.kernel = {kernel, kernel};
    s.padding = {kernel / 2, kernel / 2};
    dwc_ = add_layer<Conv2dLayer>(*this, "dwc", s);
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    check_grid(layout);
    const int64_t batch = x.size(0), n_tok = x.size(1), dim = x.size(2);
    const int64_t height = layout.height, width = layout.width, heads = config().heads;
    at::Tensor keys_from = x, reduced, normed;
    if (sr_ > 1) {
      const at::Tensor grid = x.transpose(1, 2).reshape({batch, dim, height, width});
      reduced = (*reduce_)(grid);
      normed = (*norm_)(reduced.flatten(2).transpose(1, 2));
      keys_from = normed;
    }
    const auto qg = (*qg_)(x).chunk(2, -1);
    const auto kv = (*kv_)(keys_from).chunk(2, -1);
    at::Tensor k = kv[0];
    if (position_.defined()) k = k + position_;
    const at::Tensor scale = at::softplus(scale_);
    const at::Tensor q = split_heads(qg[0] / scale, heads);  // (B, h, N, d)
    k = split_heads(k / scale, heads);                       // (B, h, n, d)
    const at::Tensor v = split_heads(kv[1], heads);          // (B, h, n, d)
    const int64_t n = k.size(2), d = k.size(3);
    // Per head and channel exponent, broadcast over the tokens.
    const at::Tensor p = 1 + alpha_ * at::sigmoid(power_);  // (1, h, 1, d)
    const at::Tensor q_pos = at::pow(at::relu(q), p), q_neg = at::pow(at::relu(-q), p);
    const at::Tensor phi_q = at::cat({q_pos, q_neg}, -1);      // same-sign features
    const at::Tensor phi_q_opp = at::cat({q_neg, q_pos}, -1);  // opposite-sign features
    const at::Tensor phi_k = at::cat({at::pow(at::relu(k), p), at::pow(at::relu(-k), p)}, -1);
    const at::Tensor v_sim = v.narrow(-1, 0, d / 2), v_opp = v.narrow(-1, d / 2, d / 2);
    const at::Tensor k_mean = phi_k.mean(-2);  // (B, h, 2d)
    const at::Tensor kv_sim = at::matmul(phi_k.transpose(-2, -1), v_sim) / n;
    const at::Tensor kv_opp = at::matmul(phi_k.transpose(-2, -1), v_opp) / n;
    const at::Tensor den_sim = at::matmul(phi_q, k_mean.unsqueeze(-1));  // (B, h, N, 1)
    const at::Tensor den_opp = at::matmul(phi_q_opp, k_mean.unsqueeze(-1));
    at::Tensor out = at::cat({at::matmul(phi_q, kv_sim) / (den_sim + kPolaEps),
                              at::matmul(phi_q_opp, kv_opp) / (den_opp + kPolaEps)},
                             -1);

    // dwc on v as (B·h, d, H, W), its weights shared by the heads.
    at::Tensor v_tokens = v;
    if (sr_ > 1)
      v_tokens = at::upsample_linear1d(v.transpose(-2, -1).reshape({batch * heads, d, n}), {n_tok},
                                       /*align_corners=*/false)
                     .reshape({batch, heads, d, n_tok})
                     .transpose(-2, -1);
    const at::Tensor dwc_v =
        (*dwc_)(v_tokens.reshape({batch * heads, height, width, d}).permute({0, 3, 1, 2}))
            .reshape({batch, heads, d, n_tok})
            .transpose(-2, -1);

    if (request) {
      auto trace = std::make_shared<PolaTrace>();
      init_trace(*trace, x, layout, *request);
      trace->heads = 2 * heads;  // each head's same-sign and opposite-sign maps
      trace->head_dim = d / 2;   // ... each mixing half of the head's value channels
      HeadGroup sim = all_heads_group(*trace, heads, phi_q, phi_k, v_sim);
      HeadGroup opp = all_heads_group(*trace, heads, phi_q_opp, phi_k, v_opp);
      sim.name = "sim";
      opp.name = "opp";
      opp.first_head = heads;
      if (sr_ > 1) sim.keys = opp.keys = {0, height / sr_, width / sr_, sr_};
      trace->groups.push_back(std::move(sim));
      trace->groups.push_back(std::move(opp));
      trace->internals["pola.phi_q"] = trace->keep(phi_q);
      trace->internals["pola.phi_k"] = trace->keep(phi_k);
      trace->internals["pola.kv_sim"] = trace->keep(kv_sim);
      trace->internals["pola.kv_opp"] = trace->keep(kv_opp);
      trace->internals["pola.k_mean"] = trace->keep(k_mean);
      trace->internals["pola.dwc"] = trace->keep(dwc_v);
      trace->internals["pola.gate"] = trace->keep(qg[1]);
      if (sr_ > 1) {
        trace->internals["pola.sr"] = trace->keep(reduced);
        trace->internals["pola.norm"] = trace->keep(normed);
      }
      // The rows are normalised without the 1e-6; the forward's denominators have it.
      if (wants_explicit(request)) {
        const at::Tensor mixed = explicit_mix(*trace);  // (B, 2h, N, d/2): sim heads, opp heads
        out = at::cat({mixed.narrow(1, 0, heads) * (den_sim / (den_sim + kPolaEps)),
                       mixed.narrow(1, heads, heads) * (den_opp / (den_opp + kPolaEps))},
                      -1);
      }
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out + dwc_v) * qg[1]);
  }

 private:
  void check_grid(const TokenLayout& layout) const {
    const std::string where =
        std::to_string(layout.tokens()) + " tokens (" + layout.describe() + ")";
    if (patches_ > 0 && layout.tokens() != patches_)
      throw AttentionError(
          "pola: the positional encoding was built for num_patches = " + std::to_string(patches_) +
          " tokens, but the layer has " + where +
          "; build it with num_patches = " + std::to_string(layout.tokens()) + " (or 0 for none)");
    if (sr_ > 1 && (layout.height % sr_ != 0 || layout.width % sr_ != 0))
      throw AttentionError("pola: sr_ratio " + std::to_string(sr_) +
                           " must divide the grid's height and width, but the layer has " + where);
  }

  std::shared_ptr<LinearLayer> qg_, kv_, proj_;
  std::shared_ptr<Conv2dLayer> reduce_, dwc_;
  std::shared_ptr<LayerNormLayer> norm_;
  at::Tensor power_, scale_, position_;
  int64_t sr_ = 1, patches_ = 0;
  double alpha_ = 4.0;
};

}  // namespace

MechanismInfo pola_mechanism() {
  MechanismInfo info;
  info.name = "pola";
  info.summary =
      "PolaFormer polarity-aware linear attention: same- and opposite-sign maps, learned powers, "
      "gate";
  info.needs_grid = true;
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer};
  info.options = {
      {"alpha", OptionSpec::Kind::Real, 4, 0, 1e6,
       "range α of the learned powers p = 1 + α·sigmoid(power)"},
      {"kernel_size", OptionSpec::Kind::Integer, 5, 1, 1e6, "odd side of the depthwise conv on v"},
      {"sr_ratio", OptionSpec::Kind::Integer, 1, 1, 1e6,
       "spatial reduction R of the keys (conv k = stride = R + LayerNorm; must divide H, W)"},
      {"qkv_bias", OptionSpec::Kind::Flag, 0, 0, 1, "bias on the qg and kv projections"},
      {"num_patches", OptionSpec::Kind::Integer, 0, 0, 1e9,
       "tokens the learned positional encoding of k is built for (0: no encoding, any grid)"},
  };
  // The same-sign and opposite-sign map of every head are heads of their own.
  info.trace_heads = [](const MechanismConfig& c) { return 2 * c.heads; };
  ReferenceModule module;  // the reference PolaLinearAttention on the config's H x W grid
  module.arch = "pola_linear_attention";
  module.fixture = "pola_attn";
  module.args = {{"qkv_bias", "qkv_bias"},
                 {"sr_ratio", "sr_ratio"},
                 {"alpha", "alpha"},
                 {"kernel_size", "kernel_size"},
                 {"num_patches", "num_patches"}};
  module.grid = true;
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<PolaAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
