// Spatial-reduction attention (PVT v1, Wang et al. 2021; SPEC_COMPARISON "Spatial-reduction
// attention"): softmax attention whose keys and values come from the token grid shrunk by
// a strided convolution, so a layer costs O(N·M) with M = ⌊H/R⌋·⌊W/R⌋ instead of O(N²).
//   parameters  q: Linear(C, C); kv: Linear(C, 2C) rows [k | v], head-major (both with bias
//               when qkv_bias); proj: Linear(C, C). Only when R > 1: sr: Conv2d(C, C,
//               kernel = stride = R, bias) and norm: LayerNorm(C, eps 1e-5) — the default eps,
//               not the 1e-6 of PVT's blocks (with R = 1 the reference has neither module).
//   options     sr_ratio R (default 2; PVT's stages use 8, 4, 2, 1); qkv_bias (default 1:
//               the reference class defaults to False, PVT's models pass True)
//   grid        pure grid only (the reduction convolves the H×W map). H or W not divisible
//               by R: the convolution floors, and the last H mod R rows and W mod R columns
//               are covered by no key (as in the reference).
//   trace       one head group "all": q (B, h, N, d) as projected (not scaled); k, v
//               (B, h, M, d) over the reduced grid {0, ⌊H/R⌋, ⌊W/R⌋, cell R}; internals
//               "sra.reduced" (B, M, C): the reduced map after norm (the tensor kv projects;
//               the input itself when R = 1)
//   rows        softmax(q_i·kᵀ·d^-0.5) over the M reduced keys; each key stands for the R×R
//               block of tokens it was convolved from (row_on_tokens spreads it there)
//   explicit    out = proj(merge(rows·v))
#include <ATen/ATen.h>

#include <cmath>

#include "core/attention/fused_attention.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/attention/softmax_trace.h"

namespace attnlab::attention {
namespace {

class SpatialReductionAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns("proj.weight", config().heads, config().head_dim());
  }
  explicit SpatialReductionAttention(const MechanismConfig& c) : AttentionMechanism("sra", c) {
    const bool bias = c.flag("qkv_bias");
    ratio_ = c.int_option("sr_ratio");
    // Registered in the reference's order: q, kv, proj, then sr and norm when R > 1.
    q_ = add_layer<LinearLayer>(*this, "q", c.dim, c.dim, bias);
    kv_ = add_layer<LinearLayer>(*this, "kv", c.dim, 2 * c.dim, bias);
    proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
    if (ratio_ > 1) {
      Conv2dLayer::Shape shape;
      shape.in = shape.out = c.dim;
      shape.kernel = shape.stride = {ratio_, ratio_};
      sr_ = add_layer<Conv2dLayer>(*this, "sr", shape);
      norm_ = add_layer<LayerNormLayer>(*this, "norm", c.dim, 1e-5);
    }
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    require_pure_grid(layout);
    const int64_t batch = x.size(0), dim = x.size(2), heads = config().heads;
    if (layout.height < ratio_ || layout.width < ratio_)
      throw AttentionError("sra: a " + std::to_string(layout.height) + "×" +
                           std::to_string(layout.width) + " grid is smaller than one " +
                           std::to_string(ratio_) + "×" + std::to_string(ratio_) +
                           " reduction cell (sr_ratio)");
    at::Tensor reduced = x;  // (B, M, C): what kv projects
    if (ratio_ > 1) {
      at::Tensor map = x.transpose(1, 2).reshape({batch, dim, layout.height, layout.width});
      reduced = (*norm_)((*sr_)(map).flatten(2).transpose(1, 2));
    }
    const at::Tensor q = split_heads((*q_)(x), heads);
    const auto kv = (*kv_)(reduced).chunk(2, -1);
    const at::Tensor k = split_heads(kv[0], heads), v = split_heads(kv[1], heads);
    at::Tensor out =  // (B, h, N, d); the explicit form computes it from the matrices below
        wants_explicit(request) ? at::Tensor() : softmax_attention(q, k, v, scale_);
    if (request) {
      auto trace = std::make_shared<SoftmaxRowsTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      HeadGroup group = all_heads_group(*trace, heads, q, k, v);
      group.keys = KeySpace{0, layout.height / ratio_, layout.width / ratio_, ratio_};
      trace->groups.push_back(std::move(group));
      trace->internals["sra.reduced"] = trace->keep(reduced);
      if (wants_explicit(request)) out = explicit_mix(*trace);
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out));
  }

 private:
  std::shared_ptr<LinearLayer> q_, kv_, proj_;
  std::shared_ptr<Conv2dLayer> sr_;
  std::shared_ptr<LayerNormLayer> norm_;
  int64_t ratio_ = 1;
  double scale_ = 1.0;
};

}  // namespace

MechanismInfo sra_mechanism() {
  MechanismInfo info;
  info.name = "sra";
  info.needs_grid = true;
  info.summary = "PVT spatial-reduction attention: keys/values from an R×R strided conv, O(N²/R²)";
  info.options = {
      {"sr_ratio", OptionSpec::Kind::Integer, 2, 1, 64, "spatial reduction R (1: plain MHSA)"},
      {"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the q and kv projections"}};
  ReferenceModule module;  // the fixture's PVT v1 Attention on its H×W grid
  module.arch = "pvt_sra";
  module.fixture = "sra_attn";
  module.args = {{"qkv_bias", "qkv_bias"}, {"sr_ratio", "sr_ratio"}};
  module.grid = true;
  info.reference_module = module;
  // Every query against the reduced grid's keys (and the prefix tokens).
  info.score_elements = [](const MechanismConfig& c, const TokenLayout& l) {
    const int64_t r = c.int_option("sr_ratio");
    const double keys =
        static_cast<double>(l.num_prefix() + ((l.height + r - 1) / r) * ((l.width + r - 1) / r));
    return static_cast<double>(c.heads) * static_cast<double>(l.tokens()) * keys;
  };
  info.create = [](const MechanismConfig& c) {
    return std::make_shared<SpatialReductionAttention>(c);
  };
  return info;
}

}  // namespace attnlab::attention
