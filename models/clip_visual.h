// CLIP's image tower (openai/CLIP clip/model.py VisionTransformer), the module behind both
// CLIP archs: "clip_visual_vit" (the tower alone) and "clip_full" (the tower and the text
// tower, models/clip_full.h). Its own parameter names, so a release's visual.* keys load
// strictly once the prefix is taken off:
//   conv1 (no bias) → tokens [class_embedding, patches] + positional_embedding → ln_pre →
//   transformer.resblocks.i: x += attn(ln_1(x)); x += mlp(ln_2(x)), mlp = c_proj(QuickGELU(
//   c_fc(x))), attn the registered softmax with nn.MultiheadAttention's names (in_proj_weight,
//   in_proj_bias, out_proj; q·kᵀ/√d) → ln_post on the class token → @ proj (a raw
//   (width, output_dim) matrix). CLIP runs its transformer as (tokens, batch, C); the result
//   is the same per token, and the tensors are recorded B×N×C as the fixtures store them.
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "core/attention/layers.h"
#include "core/attention/mechanism.h"
#include "models/backbone.h"
#include "models/model_config.h"
#include "models/norm_layers.h"

namespace attnlab::models {

// The image tower's sizes.
struct ClipVisualSpec {
  int64_t resolution = 224, patch = 16, width = 0, layers = 0, heads = 0, output_dim = 0;
  double ln_eps = 1e-5;
  int64_t grid() const { return resolution / patch; }
  attention::TokenLayout layout() const;
};
// The tower's sizes checked (each at least 1, the patch dividing the resolution, the heads
// the width); `who` names the config in the message ("clip_visual_vit config").
void check_clip_visual_spec(const ClipVisualSpec& s, const std::string& who);

// c_proj(QuickGELU(c_fc(x))), QuickGELU(x) = x·σ(1.702·x): both towers' MLP.
class ClipMlp : public torch::nn::Module {
 public:
  ClipMlp(int64_t width, int64_t hidden);
  at::Tensor operator()(const at::Tensor& x) const;

 private:
  std::shared_ptr<attention::LinearLayer> c_fc_, c_proj_;
};

class ClipVisual : public Backbone {
 public:
  ClipVisual(ClipVisualSpec spec, std::string arch);
  std::string arch() const override { return arch_; }
  OutputKind output_kind() const override { return OutputKind::embedding; }
  // The class token ln_post reads (a linear probe's features); no classifier to read with.
  at::Tensor readout_features(const at::Tensor& tokens) const override;
  at::Tensor readout_logits(const at::Tensor&) const override;
  std::vector<StageShape> stage_shapes(int64_t, int64_t) const override;
  const ClipVisualSpec& visual_spec() const { return spec_; }
  // What CLIP does to its class token, done to any tokens (B, N, width): ln_post, then
  // @ proj — (B, N, output_dim). On the last block's patch tokens: the per-patch embeddings.
  at::Tensor project_tokens(const at::Tensor& tokens) const;
  // The class token after ln_post (the recorded "out.ln_post", (B, width)) @ proj: the
  // image embedding.
  at::Tensor project_pooled(const at::Tensor& pooled) const { return at::matmul(pooled, proj_); }

 protected:
  ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) override;

 private:
  class Block;
  ClipVisualSpec spec_;
  std::string arch_;
  at::Tensor class_embedding_, positional_embedding_, proj_;
  std::shared_ptr<attention::Conv2dLayer> conv1_;
  std::shared_ptr<LayerNormLayer> ln_pre_, ln_post_;
  std::vector<std::shared_ptr<Block>> blocks_;
};

}  // namespace attnlab::models
