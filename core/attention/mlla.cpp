// MLLA linear attention (Han et al., NeurIPS 2024, "Demystify Mamba in Vision";
// SPEC_COMPARISON "MLLA linear attention"), as LeapLabTHU/MLLA's LinearAttention computes it.
//   parameters  qk: Linear(C, 2C) rows [q | k]; lepe: depthwise Conv2d(C, C, 3, pad 1, bias).
//               No value projection (v = x) and no output projection: the MLLA block gates
//               and projects outside the module. With resolution_h/w > 0 the persistent
//               buffer rope.rotations (H, W, C/2, 2) = (cos, sin), as in the reference's
//               state dict.
//   options     qkv_bias (1, the reference's default; applies to qk), rope_base (10000), eps
//               (1e-6, the denominator's), resolution_h, resolution_w (the reference's
//               input_resolution: 0 = no stored table; > 0: the table is a buffer of that size).
//   forward     φ = ELU + 1 on q and k (all C). RoPE over all C, before the head split:
//               C/2 channel pairs (c_2j, c_2j+1) as complex numbers, k_max = C/4,
//               θ_i = base^(−i/k_max); pair j < k_max turns by y·θ_j, pair j ≥ k_max by
//               x·θ_{j−k_max}. Per head (contiguous d): z_i = 1/(φq_i·mean φk + eps) with the
//               UNROTATED features, kv = Σ_j rope(φk_j)ᵀ v_j / N, out_i = rope(φq_i)·kv·z_i;
//               heads merged; plus lepe(x as a C×H×W image). C must be divisible by 4.
//   grid        pure grid only, any H × W. The reference takes H = W = ⌊√N⌋ and its table's
//               grid; attnlab's extension: the rotations are a formula, so on a layer whose grid
//               is not the table's they are computed for that grid (exact: the same formula).
//               On the table's own grid the stored table is used as loaded, so a checkpoint
//               whose table differs from the formula runs as the reference runs it; such a
//               table cannot be extended, and a layer on another grid is then refused.
//   trace       one group "all": q = rope(φq), k = rope(φk) (B, h, N, d), v = x per head.
//               Internals:
//                 mlla.phi_q, mlla.phi_k  (B, h, N, d) φ before the rotation
//                 mlla.kv                 (B, h, d, d) Σ rope(φk)ᵀ v / N, the KV buffer (rank)
//                 mlla.z                  (B, h, N) 1/(φq_i·mean φk + eps)
//                 mlla.lepe               (B, h, N, d) lepe(x), added after the mixing
//   rows        a_ij = rope(φq_i)·rope(φk_j)·z_i / N: signed (the rotation makes the products
//               of positive features negative), rows do not sum exactly to 1. The LePE is
//               local mixing too, but not part of the rows (they describe the attention).
//   products    A·x, Aᵀ·y in O(N·d·c) through rope(φQ), rope(φK), z.
//   explicit    out = rows·v + lepe(x), heads merged (no projection).
// No head_columns: the module has no output projection whose inputs could be zeroed.
#include <ATen/ATen.h>

#include <cmath>
#include <memory>
#include <string>

#include "core/attention/capabilities.h"
#include "core/attention/layers.h"
#include "core/attention/map_factors.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

// (H, W, C/2, 2) = (cos, sin) of every token's pair angles, computed in float64 and cast to
// `options` (the reference computes in float32: the two differ by float32 rounding only).
at::Tensor mlla_rotations(int64_t height, int64_t width, int64_t dim, double base,
                          const at::TensorOptions& options) {
  const int64_t k_max = dim / 4;
  const auto f64 = at::TensorOptions().dtype(at::kDouble).device(options.device());
  const at::Tensor theta = at::pow(base, -at::arange(k_max, f64) / double(k_max));  // (k_max,)
  const at::Tensor ys = at::arange(height, f64).view({height, 1, 1}) * theta;       // (H, 1, k)
  const at::Tensor xs = at::arange(width, f64).view({1, width, 1}) * theta;         // (1, W, k)
  const at::Tensor angles =
      at::cat({ys.expand({height, width, k_max}), xs.expand({height, width, k_max})}, -1);
  return at::stack({at::cos(angles), at::sin(angles)}, -1).to(options);
}

// Each channel pair (a, b) of x (B, N, C) turned by its token's angle: (a·cos − b·sin,
// a·sin + b·cos), with rotations (H, W, C/2, 2).
at::Tensor mlla_rotate(const at::Tensor& x, const at::Tensor& rotations) {
  const int64_t batch = x.size(0), n = x.size(1), c = x.size(2);
  const at::Tensor r = rotations.reshape({n, c / 2, 2});
  const at::Tensor cos = r.select(-1, 0), sin = r.select(-1, 1);
  const at::Tensor pairs = x.reshape({batch, n, c / 2, 2});
  const at::Tensor a = pairs.select(-1, 0), b = pairs.select(-1, 1);
  return at::stack({a * cos - b * sin, a * sin + b * cos}, -1).reshape({batch, n, c});
}

class MllaTrace : public AttentionTrace, public MapFactorSource, public AddedMixingSource {
 public:
  at::Tensor z;            // (B, h, N)
  at::Tensor lepe_weight;  // (C, 1, 3, 3)

  // Rows rope(φq_i)·rope(φK)ᵀ·z_i/N: left = rope(φQ)·z/N, right = rope(φK).
  std::optional<MapFactors> map_factors(int64_t b, int64_t head) const override {
    const HeadGroup& g = group_of(head);
    const at::Tensor q = g.q[b][head], k = g.k[b][head];
    return MapFactors{q * (z[b][head] / double(k.size(0))).unsqueeze(1), k};
  }

  // The LePE on v = x: head h's channel c is the layer's channel h·d + c.
  std::vector<at::Tensor> added_mixing(int64_t head,
                                       const std::vector<int64_t>& channels) const override {
    std::vector<at::Tensor> out;
    for (int64_t c : channels)
      out.push_back(conv_mixing_matrix(lepe_weight[head * head_dim + c][0], layout.height,
                                       layout.width, 1, 1));
    return out;
  }
  std::string added_mixing_name() const override { return "lepe"; }
  std::vector<RankMatrices> rank_matrices(int64_t b) const override {
    return {{"kv", internal("mlla.kv")[b]}};
  }

 protected:
  at::Tensor compute_rows(int64_t b, const HeadGroup& g, int64_t h,
                          const at::Tensor& q_rows) const override {
    const at::Tensor k = g.k[b][h];
    const at::Tensor scale = z[b][h].index_select(0, q_rows) / double(k.size(0));
    return at::matmul(g.q[b][h].index_select(0, q_rows), k.t()) * scale.unsqueeze(1);
  }

  // A = diag(z/N) rope(φQ) rope(φK)ᵀ.
  at::Tensor compute_apply(int64_t b, const HeadGroup& g, int64_t h, const at::Tensor& x,
                           bool transposed) const override {
    const at::Tensor q = g.q[b][h], k = g.k[b][h];
    const at::Tensor scale = (z[b][h] / double(k.size(0))).unsqueeze(1);
    if (transposed) return at::matmul(k, at::matmul(q.t(), x * scale));
    return at::matmul(q, at::matmul(k.t(), x)) * scale;
  }
};

class MllaAttention : public AttentionMechanism {
 public:
  explicit MllaAttention(const MechanismConfig& c) : AttentionMechanism("mlla", c) {
    if (c.dim % 4 != 0)
      throw AttentionError("mlla: the channel count " + std::to_string(c.dim) +
                           " must be divisible by 4 (RoPE pairs split between rows and columns)");
    base_ = c.option("rope_base");
    eps_ = c.option("eps");
    res_h_ = c.int_option("resolution_h");
    res_w_ = c.int_option("resolution_w");
    if ((res_h_ > 0) != (res_w_ > 0))
      throw AttentionError(
          "mlla: options 'resolution_h' and 'resolution_w' must both be 0 (no "
          "stored table) or both > 0, not " +
          std::to_string(res_h_) + " and " + std::to_string(res_w_));
    qk_ = add_layer<LinearLayer>(*this, "qk", c.dim, 2 * c.dim, c.flag("qkv_bias"));
    Conv2dLayer::Shape s;
    s.in = s.out = s.groups = c.dim;
    s.kernel = {3, 3};
    s.padding = {1, 1};
    lepe_ = add_layer<Conv2dLayer>(*this, "lepe", s);
    if (res_h_ > 0) {
      auto rope = register_module("rope", std::make_shared<torch::nn::Module>());
      rotations_ = rope->register_buffer(
          "rotations", mlla_rotations(res_h_, res_w_, c.dim, base_, at::TensorOptions()));
    }
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), n = x.size(1), dim = x.size(2);
    const int64_t height = layout.height, width = layout.width, heads = config().heads;
    const at::Tensor rotations = rotations_for(layout, x.options());
    const auto qk = (*qk_)(x).chunk(2, -1);
    const at::Tensor phi_q = at::elu(qk[0]) + 1, phi_k = at::elu(qk[1]) + 1;  // (B, N, C)
    const at::Tensor q = split_heads(mlla_rotate(phi_q, rotations), heads);
    const at::Tensor k = split_heads(mlla_rotate(phi_k, rotations), heads);
    const at::Tensor v = split_heads(x, heads);
    const at::Tensor q_plain = split_heads(phi_q, heads), k_plain = split_heads(phi_k, heads);
    // The denominator uses the unrotated features: positive, so z is well defined.
    const at::Tensor z =
        1.0 / (at::matmul(q_plain, k_plain.mean(-2).unsqueeze(-1)).squeeze(-1) + eps_);
    const at::Tensor kv = at::matmul(k.transpose(-2, -1), v) / double(n);  // (B, h, d, d)
    at::Tensor out = at::matmul(q, kv) * z.unsqueeze(-1);
    const at::Tensor lepe =
        (*lepe_)(x.transpose(1, 2).reshape({batch, dim, height, width})).flatten(2).transpose(1, 2);
    if (request) {
      auto trace = std::make_shared<MllaTrace>();
      init_trace(*trace, x, layout, *request);
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, v));
      trace->z = trace->keep(z);
      trace->lepe_weight = lepe_->weight.detach();
      trace->internals["mlla.phi_q"] = trace->keep(q_plain);
      trace->internals["mlla.phi_k"] = trace->keep(k_plain);
      trace->internals["mlla.kv"] = trace->keep(kv);
      trace->internals["mlla.z"] = trace->keep(z);
      trace->internals["mlla.lepe"] = trace->keep(split_heads(lepe, heads));
      // The rows carry z, so rows·v is the mixing itself.
      if (wants_explicit(request)) out = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    return merge_heads(out) + lepe;
  }

 private:
  // The stored table on its own grid (as loaded); the formula elsewhere, when the stored
  // table is the formula's (else it cannot be extended and the layer is refused).
  at::Tensor rotations_for(const TokenLayout& layout, const at::TensorOptions& options) const {
    if (rotations_.defined() && layout.height == res_h_ && layout.width == res_w_)
      return rotations_.to(options.dtype());
    const at::Tensor computed =
        mlla_rotations(layout.height, layout.width, config().dim, base_, options);
    // Checked once per loaded table (its version and storage), not on every forward.
    const bool checked = rotations_.defined() && !rotations_.is_meta() &&
                         rotations_._version() == checked_version_ &&
                         rotations_.data_ptr() == checked_data_;
    if (rotations_.defined() && !rotations_.is_meta() && !checked) {
      const at::Tensor own = mlla_rotations(res_h_, res_w_, config().dim, base_,
                                            rotations_.options().dtype(at::kFloat));
      const double off = (rotations_.to(at::kFloat) - own).abs().max().item<double>();
      if (!(off <= 1e-4))
        throw AttentionError("mlla: the loaded rope.rotations (" + std::to_string(res_h_) + "x" +
                             std::to_string(res_w_) +
                             ", option resolution_h/resolution_w) differ from the RoPE "
                             "formula (max " +
                             std::to_string(off) + "), so they cannot be extended to the layer's " +
                             layout.describe() + "; run it on the " + std::to_string(res_h_) + "x" +
                             std::to_string(res_w_) + " grid its table was built for");
      checked_version_ = rotations_._version();
      checked_data_ = rotations_.data_ptr();
    }
    return computed;
  }

  std::shared_ptr<LinearLayer> qk_;
  std::shared_ptr<Conv2dLayer> lepe_;
  at::Tensor rotations_;
  double base_ = 10000.0, eps_ = 1e-6;
  int64_t res_h_ = 0, res_w_ = 0;
  mutable int64_t checked_version_ = -1;
  mutable const void* checked_data_ = nullptr;
};

}  // namespace

MechanismInfo mlla_mechanism() {
  MechanismInfo info;
  info.name = "mlla";
  info.summary = "MLLA linear attention: ELU+1 kernel, 2-D RoPE over all channels, v = x, LePE";
  info.needs_grid = true;
  info.linear_in_tokens = true;
  info.capabilities = {capability::kSignedRows, capability::kKvBuffer};
  info.options = {
      {"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the qk projection"},
      {"rope_base", OptionSpec::Kind::Real, 10000, 1e-9, 1e12,
       "RoPE frequency base: θ_i = base^(−i/(C/4))"},
      {"eps", OptionSpec::Kind::Real, 1e-6, 0, 1, "added to the denominator φq·mean φk"},
      {"resolution_h", OptionSpec::Kind::Integer, 0, 0, 1e6,
       "rows of the stored RoPE table rope.rotations (0: none stored, computed per grid)"},
      {"resolution_w", OptionSpec::Kind::Integer, 0, 0, 1e6,
       "columns of the stored RoPE table rope.rotations (0: none stored)"},
  };
  ReferenceModule module;  // the reference LinearAttention on its input_resolution grid
  module.arch = "mlla_linear_attention";
  module.fixture = "mlla_attn";
  module.args = {{"qkv_bias", "qkv_bias"}, {"rope_base", "rope_base"}, {"eps", "eps"}};
  module.grid = true;
  module.grid_arg = "input_resolution";
  module.grid_options = {"resolution_h", "resolution_w"};
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<MllaAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
