// Softmax multi-head self-attention (SPEC §1.1), the DeiT/ViT baseline.
//   parameters  qkv: Linear(C, 3C) rows [q | k | v], head-major; proj: Linear(C, C); or,
//               with mha_layout, nn.MultiheadAttention's names for the same (CLIP):
//               in_proj_weight (3C, C), in_proj_bias (3C), out_proj: Linear(C, C)
//   options     qkv_bias (default 1), mha_layout (default 0)
//   trace       one head group "all": q, k, v (B, h, N, d) as projected (q not scaled)
//   rows        a_i = softmax(q_i · kᵀ · d^-0.5) over all N tokens
//   explicit    out = proj(merge(rows·v))
#include <ATen/ATen.h>

#include <cmath>

#include "core/attention/fused_attention.h"
#include "core/attention/head_outputs.h"
#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/attention/softmax_trace.h"
#include "core/nn/initial_values.h"

namespace attnlab::attention {
namespace {

// Plain softmax's trace also gives the reference fixtures' "attn" tensor: the
// (B, heads, N, N) probabilities, the whole matrix of every head.
class SoftmaxTrace : public SoftmaxRowsTrace {
 public:
  NamedTensors reference_outputs() const override {
    std::vector<at::Tensor> images;
    for (int64_t b = 0; b < batch; ++b) {
      std::vector<at::Tensor> per_head;
      for (int64_t h = 0; h < heads; ++h) per_head.push_back(matrix(b, h));
      images.push_back(at::stack(per_head));
    }
    return {{"attn", at::stack(images)}};
  }
};

class SoftmaxAttention : public AttentionMechanism, public HeadOutputSource {
 public:
  std::vector<HeadColumns> head_columns() const override {
    return head_major_columns(mha_ ? "out_proj.weight" : "proj.weight", config().heads,
                              config().head_dim());
  }
  explicit SoftmaxAttention(const MechanismConfig& c)
      : AttentionMechanism(kPlainSoftmaxMechanism, c), mha_(c.flag("mha_layout")) {
    if (mha_) {
      // Initialised as nn.MultiheadAttention does (Xavier-uniform, zero bias); loaded over.
      const double bound = std::sqrt(6.0 / static_cast<double>(4 * c.dim));
      in_proj_weight_ =
          register_parameter("in_proj_weight", nn::initial_uniform({3 * c.dim, c.dim}, bound));
      if (c.flag("qkv_bias"))
        in_proj_bias_ = register_parameter("in_proj_bias", at::zeros({3 * c.dim}));
      proj_ = add_layer<LinearLayer>(*this, "out_proj", c.dim, c.dim, true);
    } else {
      qkv_ = add_layer<LinearLayer>(*this, "qkv", c.dim, 3 * c.dim, c.flag("qkv_bias"));
      proj_ = add_layer<LinearLayer>(*this, "proj", c.dim, c.dim, true);
    }
    scale_ = 1.0 / std::sqrt(static_cast<double>(c.head_dim()));
  }

 protected:
  at::Tensor run(const at::Tensor& x, const TokenLayout& layout, TraceRequest* request) override {
    const int64_t heads = config().heads;
    auto [q, k, v] =
        split_qkv(mha_ ? at::linear(x, in_proj_weight_, in_proj_bias_) : (*qkv_)(x), heads);
    // The explicit form computes the output from the matrices itself (below).
    at::Tensor out = wants_explicit(request) ? at::Tensor() : softmax_attention(q, k, v, scale_);
    if (request) {
      auto trace = std::make_shared<SoftmaxTrace>();
      init_trace(*trace, x, layout, *request);
      trace->scale = scale_;
      trace->groups.push_back(all_heads_group(*trace, heads, q, k, v));
      if (wants_explicit(request)) out = explicit_mix(*trace);
      trace->head_outputs = trace->keep(out);  // rank's output features, already computed
      request->trace = std::move(trace);
    }
    return (*proj_)(merge_heads(out));
  }

 private:
  bool mha_ = false;
  std::shared_ptr<LinearLayer> qkv_, proj_;
  at::Tensor in_proj_weight_, in_proj_bias_;  // mha_layout
  double scale_ = 1.0;
};

}  // namespace

MechanismInfo softmax_mechanism() {
  MechanismInfo info;
  info.name = kPlainSoftmaxMechanism;
  info.summary = "softmax multi-head self-attention (ViT/DeiT)";
  info.options = {{"qkv_bias", OptionSpec::Kind::Flag, 1, 0, 1, "bias on the qkv projection"},
                  {"mha_layout", OptionSpec::Kind::Flag, 0, 0, 1,
                   "nn.MultiheadAttention's parameter names (in_proj_weight, in_proj_bias, "
                   "out_proj), as CLIP's image tower"}};
  info.create = [](const MechanismConfig& c) { return std::make_shared<SoftmaxAttention>(c); };
  return info;
}

}  // namespace attnlab::attention
