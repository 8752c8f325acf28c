// Focused linear attention (FLatten Transformer, PVT form; Han et al. ICCV 2023;
// SPEC_COMPARISON "Focused linear attention"), as LeapLabTHU/FLatten-Transformer's
// FocusedLinearAttention computes it (the May 2024 mean form).
//   parameters  q: Linear(C, C); kv: Linear(C, 2C) rows [k | v]; proj: Linear(C, C);
//               with sr_ratio R > 1: sr: Conv2d(C, C, R, stride R) and norm: LayerNorm(C,
//               eps 1e-5); dwc: depthwise Conv2d(d, d, kernel, pad kernel//2, bias), shared by
//               every head; scale (1, 1, C); positional_encoding (1, num_patches / R², C).
//               qkv_bias applies to q and kv.
//   options     focusing_factor p (3), kernel_size (5, odd), sr_ratio R (1), qkv_bias (0, the
//               reference default; its PVT models pass 1), num_patches (0: no positional
//               encoding, any grid — what a freshly built reference module computes, its
//               encoding starting at zero; > 0: the reference's parameter, the layer must then
//               have exactly num_patches tokens).
//   forward     k, v from the tokens (R > 1: from LayerNorm(sr(grid)), n = (H/R)(W/R) keys);
//               k += positional_encoding. Over all C channels, before the head split:
//               φ(x) = f^p·‖f‖/‖f^p‖ with f = (ReLU(x) + 1e-6)/softplus(scale). Per head:
//               out_i = φq_i·[(Σ_j φk_jᵀ v_j)/n] / (φq_i·mean_j φk_j + 1e-6); plus
//               dwc(v) with v as (B·h, d, H, W) (R > 1: v linearly interpolated n → N along
//               the token index first); heads merged; proj.
//   grid        pure grid only; R > 1 needs R to divide H and W (the pooled keys must tile the
//               grid for the trace's key space; the reference would drop the remainder).
//   trace       one group "all": q = φq (B, h, N, d), k = φk, v (B, h, n, d), keys the grid
//               (R > 1: the (H/R)×(W/R) pooled grid, cell R). Internals:
//                 flatten.kv      (B, h, d, d) Σ φkᵀv / n, the KV buffer (rank)
//                 flatten.k_mean  (B, h, d) mean φk
//                 flatten.dwc_v   (B, h, N, d) dwc(v), added after the mixing
//   rows        a_ij = φq_i·φk_j / Σ_m φq_i·φk_m (positive, sum to 1; the 1e-6 is not in the
//               row). The dwc term is local token mixing too (a kernel² neighbourhood on v),
//               but it is not part of the rows: they describe the attention part only.
//   products    A·x, Aᵀ·y in O(N·d·c) through φQ, φK (R = 1; pooled keys use rows).
//   explicit    out = rows·v · den/(den + 1e-6) + dwc(v), den = φq_i·mean φk; merge; proj
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "core/attention/capabilities.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"
#include "core/attention/head_outputs.h"

namespace attnlab::attention {
namespace {

constexpr double kEps = 1e-6;  // the reference's, in the kernel and in the denominator

class FlattenTrace : public AttentionTrace, public MapFactorSource, public AddedMixingSource {
 public:
  at::Tensor dwc_weight;  // (d, 1, k, k), shared by the heads; undefined when sr_ratio > 1

  // Rows φq_i·φKᵀ / (φq_i·Σφk): left = φQ / den, right = φK.
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    const at::Tensor q = g.q[b][head - g.first_head], k = g.k[b][head - g.first_head];
    return MapFactors{q / at::matmul(q, k.sum(0)).unsqueeze(1), k};
  }

  // The dwc on v: channel c's kernel, the same for every head.
  std::vector<at::Tensor> added_mixing(int64_t, const std::vector<int64_t>& channels) const override {
    std::vector<at::Tensor> out;
    if (!dwc_weight.defined()) return out;
    const int64_t pad = dwc_weight.size(-1) / 2;
    for (int64_t c : channels)
      out.push_back(conv_mixing_matrix(dwc_weight[c][0], layout.height, layout.width, pad, pad));
    return out;
  }
  std::string added_mixing_name() const override { return "dwc"; }
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal("flatten.kv")[b]}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const at::Tensor scores = at::matmul(g.q[b][h].index_select(0, q_rows), g.k[b][h].t());
    return scores / scores.sum(-1, /*keepdim=*/true);
  }

  // A = diag(1/den) φQ φKᵀ with den = φQ·Σφk, the rows' sums.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];
    const at::Tensor den = at::matmul(q, k.sum(0)).unsqueeze(1);
    if (transposed) return at::matmul(k, at::matmul(q.t(), x / den));
    return at::matmul(q, at::matmul(k.t(), x)) / den;
  }
};

class FlattenAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit FlattenAttention(const MechanismConfig& c) : AttentionMechanism("flatten", c) {
    const int64_t kernel = c.int_option("kernel_size");
    if (kernel % 2 == 0)
      throw AttentionError("flatten: option 'kernel_size' = " + std::to_string(kernel) +
                           " must be odd (dwc pads kernel//2 to keep the grid)");
    sr_ = c.int_option("sr_ratio");
    patches_ = c.int_option("num_patches");
    if (patches_ > 0 && patches_ / (sr_ * sr_) < 1)
      throw AttentionError("flatten: num_patches = " + std::to_string(patches_) +
                           " leaves no key for sr_ratio " + std::to_string(sr_));
    focusing_ = c.option("focusing_factor");
    const bool bias = c.flag("qkv_bias");
    const int64_t dim = c.dim, d = c.head_dim();
    q_ = add_layer<LinearLayer>(*this, "q", dim, dim, bias);
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
    scale_ = register_parameter("scale", at::zeros({1, 1, dim}));
    if (patches_ > 0)
      position_ =
          register_parameter("positional_encoding", at::zeros({1, patches_ / (sr_ * sr_), dim}));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    check_grid(layout);
    const int64_t batch = x.size(0), n_tok = x.size(1), dim = x.size(2);
    const int64_t height = layout.height, width = layout.width, heads = config().heads;
    at::Tensor keys_from = x;
    if (sr_ > 1) {
      const at::Tensor grid = x.transpose(1, 2).reshape({batch, dim, height, width});
      keys_from = (*norm_)((*reduce_)(grid).flatten(2).transpose(1, 2));
    }
    const auto kv = (*kv_)(keys_from).chunk(2, -1);
    at::Tensor k = kv[0];
    if (position_.defined()) k = k + position_;
    const at::Tensor scale = at::softplus(scale_);
    const at::Tensor q = split_heads(focus((*q_)(x), scale), heads);  // (B, h, N, d)
    k = split_heads(focus(k, scale), heads);                          // (B, h, n, d)
    const at::Tensor v = split_heads(kv[1], heads);
    const int64_t n = k.size(2), d = k.size(3);
    const at::Tensor k_mean = k.mean(-2);                               // (B, h, d)
    const at::Tensor kv_mean = at::matmul(k.transpose(-2, -1), v) / n;  // (B, h, d, d)
    const at::Tensor den = at::matmul(q, k_mean.unsqueeze(-1));         // (B, h, N, 1)
    at::Tensor out = at::matmul(q, kv_mean) / (den + kEps);

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
      auto trace = std::make_shared<FlattenTrace>();
      init_trace(*trace, x, layout, *request);
      HeadGroup g = all_heads_group(*trace, heads, q, k, v);
      if (sr_ > 1) g.keys = {0, height / sr_, width / sr_, sr_};
      trace->groups.push_back(std::move(g));
      trace->internals["flatten.kv"] = trace->keep(kv_mean);
      trace->internals["flatten.k_mean"] = trace->keep(k_mean);
      trace->internals["flatten.dwc_v"] = trace->keep(dwc_v);
      if (sr_ == 1) trace->dwc_weight = dwc_->weight.detach();
      // The rows are normalised without the 1e-6; the forward's denominator has it.
      if (wants_explicit(request)) out = explicit_mix(*trace) * (den / (den + kEps));
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out + dwc_v));
  }

 private:
  // φ over all C channels: (ReLU(x) + 1e-6)/scale, then the p-th power rescaled to the
  // norm it had, so that only the direction sharpens.
  at::Tensor focus(const at::Tensor& x, const at::Tensor& scale) const {
    const at::Tensor f = (at::relu(x) + kEps) / scale;
    const at::Tensor powered = f.pow(focusing_);
    return powered / powered.norm(2, -1, /*keepdim=*/true) * f.norm(2, -1, /*keepdim=*/true);
  }

  void check_grid(const TokenLayout& layout) const {
    const std::string where =
        std::to_string(layout.tokens()) + " tokens (" + layout.describe() + ")";
    if (patches_ > 0 && layout.tokens() != patches_)
      throw AttentionError("flatten: the positional encoding was built for num_patches = " +
                           std::to_string(patches_) + " tokens, but the layer has " + where +
                           "; build it with num_patches = " + std::to_string(layout.tokens()) +
                           " (or 0 for none)");
    if (sr_ > 1 && (layout.height % sr_ != 0 || layout.width % sr_ != 0))
      throw AttentionError("flatten: sr_ratio " + std::to_string(sr_) +
                           " must divide the grid's height and width, but the layer has " + where);
  }

  std::shared_ptr<LinearLayer> q_, kv_, proj_;
  std::shared_ptr<Conv2dLayer> reduce_, dwc_;
  std::shared_ptr<LayerNormLayer> norm_;
  at::Tensor scale_, position_;
  int64_t sr_ = 1, patches_ = 0;
  double focusing_ = 3.0;
};

}  // namespace

MechanismInfo flatten_mechanism() {
  MechanismInfo info;
  info.name = "flatten";
  info.summary =
      "FLatten focused linear attention: focused ReLU kernel, mean KV, depthwise conv on v";
  info.needs_grid = true;
  info.linear_in_tokens = true;
  info.capabilities = {capability::kKvBuffer};
  info.options = {
      {"focusing_factor", OptionSpec::Kind::Real, 3, 1, 100,
       "focusing power p on the kernel features (1: none)"},
      {"kernel_size", OptionSpec::Kind::Integer, 5, 1, 1e6, "odd side of the depthwise conv on v"},
      {"sr_ratio", OptionSpec::Kind::Integer, 1, 1, 1e6,
       "spatial reduction R of the keys (conv k = stride = R + LayerNorm; must divide H, W)"},
      {"qkv_bias", OptionSpec::Kind::Flag, 0, 0, 1, "bias on the q and kv projections"},
      {"num_patches", OptionSpec::Kind::Integer, 0, 0, 1e9,
       "tokens the learned positional encoding of k is built for (0: no encoding, any grid)"},
  };
  ReferenceModule module;  // the reference FocusedLinearAttention on the config's H x W grid
  module.arch = "focused_linear_attention";
  module.fixture = "flatten_attn";
  module.args = {{"qkv_bias", "qkv_bias"},
                 {"sr_ratio", "sr_ratio"},
                 {"focusing_factor", "focusing_factor"},
                 {"kernel_size", "kernel_size"},
                 {"num_patches", "num_patches"}};
  module.grid = true;
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<FlattenAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
