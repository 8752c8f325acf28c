// Hydra attention (Bolya et al. 2022; SPEC_COMPARISON "Hydra attention"): as many heads as
// channels (head dim 1), a cosine kernel whose L2 norms run over all C features, and one
// global C-vector g = Σ_t k̂_t ⊙ v_t that every token reads: out_t = q̂_t ⊙ g. O(N·C), no
// softmax, no scale, no epsilon (a token whose q or k is exactly zero gives NaN, as in the
// paper's listing). The model's num_heads does not apply: Hydra always has C heads.
//   parameters  qkv: Linear(C, 3C) rows [q | k | v]; proj: Linear(C, C) (timm's layout
//               around the paper's listing, as the fixture)
//   options     qkv_bias (default 1)
//   trace       one head group "all" of C heads with d = 1: q̂, k̂, v as (B, C, N, 1);
//               internals "hydra.kv" (B, 1, C), the global vector g (the fixture's "kv")
//   rows        feature c: a_ij = q̂_ic · k̂_jc, rank-1, signed and unnormalised (rows do
//               not sum to 1: there is no normalisation to show)
//   products    A·x = q̂ (k̂ᵀ x) and Aᵀ·y = k̂ (q̂ᵀ y) per feature, O(N)
//   explicit    out = proj(merge(rows · v))
#include <ATen/ATen.h>

#include "core/attention/capabilities.h"
#include "core/attention/factored_trace.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"

namespace attnlab::attention {
namespace {

// (B, N, C) → (B, C, N, 1): channel c as head c of dimension 1.
at::Tensor as_heads(const at::Tensor& x) {
  return x.transpose(1, 2).unsqueeze(-1);
}

class HydraAttention : public AttentionMechanism {
 public:
  explicit HydraAttention(const MechanismConfig& c) : AttentionMechanism("hydra", c) {
    qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const auto parts = (*qkv_)(x).chunk(3, -1);  // (B, N, C) each
    const at::Tensor q = parts[0] / parts[0].norm(2, -1, /*keepdim=*/true);
    const at::Tensor k = parts[1] / parts[1].norm(2, -1, /*keepdim=*/true);
    const at::Tensor& v = parts[2];
    const at::Tensor kv = (k * v).sum(-2, /*keepdim=*/true);  // (B, 1, C)
    at::Tensor out = q * kv;
    if (request) {
      auto trace = std::make_shared<FactoredRowsTrace>("hydra.kv");
      init_trace(*trace, x, layout, *request);
      trace->heads = config().dim;  // one head per channel, whatever the model's num_heads
      trace->head_dim = 1;
      trace->groups.push_back(
          all_heads_group(*trace, config().dim, as_heads(q), as_heads(k), as_heads(v)));
      trace->internals["hydra.kv"] = trace->keep(kv);
      if (wants_explicit(request)) out = merge_heads(explicit_mix(*trace));
      request->trace = std::move(trace);
    }
    return (*proj_)(out);
  }

 private:
  std::shared_ptr<LinearLayer> qkv_, proj_;
};

}  // namespace

MechanismInfo hydra_mechanism() {
  MechanismInfo info;
  info.name = "hydra";
  info.linear_in_tokens = true;
  info.heads_are_channels = true;
  info.capabilities = {capability::kKvBuffer, capability::kSignedRows};
  info.summary = "Hydra attention: C heads of dim 1, cosine kernel, one global vector, O(N·C)";
  info.options = {{"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the qkv projection"}};
  ReferenceModule module;  // the fixture's hydra_attention: a 1 × N sequence
  module.fixture = "hydra_attn";
  module.args = {{"qkv_bias", "qkv_bias"}};
  info.reference_module = module;
  info.create = [](const MechanismConfig& c) { return std::make_shared<HydraAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
