// The building blocks of the ViT family (models/vit.cpp), with timm's parameter names:
// LayerNorm (weight, bias), the MLP (fc1, fc2), the pre-norm block (norm1, attn, norm2,
// mlp) around any registered attention mechanism, and the patch embedding (proj).
// Private to the family; kept apart so that vit.cpp holds the config and the model.
#pragma once

#include <torch/nn/module.h>

#include <memory>
#include <string>

#include "core/attention/layers.h"
#include "core/attention/mechanism.h"
#include "models/backbone.h"
#include "models/norm_layers.h"
#include "models/token_merging.h"

namespace attnlab::models::vit {

// timm Mlp: fc2(GELU(fc1(x))) with the exact erf GELU.
class Mlp : public torch::nn::Module {
 public:
  Mlp(int64_t dim, int64_t hidden);
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  std::shared_ptr<attention::LinearLayer> fc1_, fc2_;
};

// DINOv2's LayerScale: x ⊙ gamma, one learned factor per channel.
class LayerScale : public torch::nn::Module {
 public:
  LayerScale(int64_t dim, double init);
  at::Tensor operator()(const at::Tensor& x) const { return x * gamma; }
  at::Tensor gamma;
};

// x += attn(norm1(x)); x += mlp(norm2(x)), or with LayerScale (layerscale_init > 0, DINOv2)
// x += ls1(attn(norm1(x))); x += ls2(mlp(norm2(x))). The attention runs through the
// recorder, and the block records "out.<path>.attn" and "out.<path>".
class Block : public torch::nn::Module {
 public:
  Block(int64_t dim, int64_t mlp_hidden, double ln_eps,
        std::shared_ptr<attention::AttentionMechanism> attn, double layerscale_init = 0.0);
  at::Tensor forward(const at::Tensor& x, const attention::TokenLayout& layout,
                     const std::string& path, ForwardRecorder& recorder);

 private:
  std::shared_ptr<LayerNormLayer> norm1_, norm2_;
  std::shared_ptr<attention::AttentionMechanism> attn_;
  std::shared_ptr<Mlp> mlp_;
  std::shared_ptr<LayerScale> ls1_, ls2_;  // null without LayerScale
};

// The block with token merging (ToMe, models/token_merging.h), same parameter names as
// Block (norm1, attn.qkv, attn.proj, norm2, mlp): x += attn(norm1(x)) with proportional
// attention when `prop_attn`; then r' = min(r, (T − 1)//2) tokens merged into others
// (sizes and, when traced, the source matrix in `state` follow); x += mlp(norm2(x)) on the
// merged tokens. Records "out.<path>.attn" (before merging), "out.<path>", and, with a
// traced source, "source.<path>" (B, T', T₀): which input tokens each token now holds.
class TomeBlock : public torch::nn::Module {
 public:
  TomeBlock(int64_t dim, int64_t heads, int64_t mlp_hidden, double ln_eps, bool qkv_bias);
  // `inputs` is the model's input token layout (the grid before any merge): a traced
  // forward traces the attention there (TomeAttention::trace_on_inputs; needs
  // state.source and prop_attn).
  at::Tensor forward(const at::Tensor& x, tome::TomeState& state, int64_t r, bool prop_attn,
                     const attention::TokenLayout& inputs, const std::string& path,
                     ForwardRecorder& recorder);

 private:
  std::shared_ptr<LayerNormLayer> norm1_, norm2_;
  std::shared_ptr<tome::TomeAttention> attn_;
  std::shared_ptr<Mlp> mlp_;
};

// patch_embed.proj: Conv(3, C, p, stride p); (B, 3, H, W) -> tokens (B, H/p · W/p, C).
class PatchEmbed : public torch::nn::Module {
 public:
  PatchEmbed(int64_t patch, int64_t dim);
  at::Tensor operator()(const at::Tensor& images) const;

 private:
  std::shared_ptr<attention::Conv2dLayer> proj_;
};

}  // namespace attnlab::models::vit
