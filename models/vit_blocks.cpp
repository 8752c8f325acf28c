// The ViT family's building blocks (declared and described in vit_blocks.h).
#include "models/vit_blocks.h"

#include <ATen/ATen.h>

#include <tuple>

#include "models/gelu.h"
#include "models/pre_norm_block.h"

namespace attnlab::models::vit {

using attention::add_layer;
using attention::Conv2dLayer;
using attention::LinearLayer;

Mlp::Mlp(int64_t dim, int64_t hidden)
    : fc1_(add_layer<LinearLayer>(*this, "fc1", dim, hidden, true)),
      fc2_(add_layer<LinearLayer>(*this, "fc2", hidden, dim, true)) {}

at::Tensor Mlp::operator()(const at::Tensor& x) const {
  return (*fc2_)(models::gelu((*fc1_)(x)));  // the exact erf form (models/gelu.h)
}

LayerScale::LayerScale(int64_t dim, double init) {
  gamma = register_parameter("gamma", at::full({dim}, init));
}

Block::Block(int64_t dim, int64_t mlp_hidden, double ln_eps,
             std::shared_ptr<attention::AttentionMechanism> attn, double layerscale_init) {
  // Registration order = the reference state-dict order: norm1, attn, (ls1,) norm2, mlp
  // (, ls2) — timm's, and DINOv2's with LayerScale.
  const bool scaled = layerscale_init > 0;
  norm1_ = register_module("norm1", std::make_shared<LayerNormLayer>(dim, ln_eps));
  attn_ = register_module("attn", std::move(attn));
  if (scaled) ls1_ = register_module("ls1", std::make_shared<LayerScale>(dim, layerscale_init));
  norm2_ = register_module("norm2", std::make_shared<LayerNormLayer>(dim, ln_eps));
  mlp_ = register_module("mlp", std::make_shared<Mlp>(dim, mlp_hidden));
  if (scaled) ls2_ = register_module("ls2", std::make_shared<LayerScale>(dim, layerscale_init));
}

at::Tensor Block::forward(const at::Tensor& x, const attention::TokenLayout& layout,
                          const std::string& path, ForwardRecorder& recorder) {
  const auto scale = [](const std::shared_ptr<LayerScale>& ls) {
    return [&ls](const at::Tensor& t) { return ls ? (*ls)(t) : t; };
  };
  return pre_norm_block_forward(
      x, layout, path, recorder, "norm1", *norm1_, attn_.get(), *norm2_,
      [this](const at::Tensor& t) { return (*mlp_)(t); }, scale(ls1_), scale(ls2_));
}

TomeBlock::TomeBlock(int64_t dim, int64_t heads, int64_t mlp_hidden, double ln_eps, bool qkv_bias) {
  // timm's Block order, so the plain ViT's state dict loads strictly (ToMe swaps classes only).
  norm1_ = register_module("norm1", std::make_shared<LayerNormLayer>(dim, ln_eps));
  attn_ = register_module("attn", std::make_shared<tome::TomeAttention>(dim, heads, qkv_bias));
  norm2_ = register_module("norm2", std::make_shared<LayerNormLayer>(dim, ln_eps));
  mlp_ = register_module("mlp", std::make_shared<Mlp>(dim, mlp_hidden));
}

at::Tensor TomeBlock::forward(const at::Tensor& x, tome::TomeState& state, int64_t r,
                              bool prop_attn, const std::string& path, ForwardRecorder& recorder) {
  const at::Tensor normed = recorder.tap(path + ".norm1", (*norm1_)(x));
  auto [a, metric] = attn_->forward(normed, prop_attn ? state.size : at::Tensor());
  recorder.output("out", path + ".attn", a);
  at::Tensor y = x + a;
  const tome::TomeMatch match = tome::tome_match(metric, r);
  state.source = tome::tome_merge_source(match, state.source);
  std::tie(y, state.size) = tome::tome_merge_weighted(match, y, state.size);
  if (state.source.defined()) recorder.output("source", path, state.source);
  y = y + (*mlp_)((*norm2_)(y));
  recorder.output("out", path, y);
  return recorder.tap(path, y);
}

PatchEmbed::PatchEmbed(int64_t patch, int64_t dim) {
  Conv2dLayer::Shape shape;
  shape.in = 3;
  shape.out = dim;
  shape.kernel = {patch, patch};
  shape.stride = {patch, patch};
  proj_ = add_layer<Conv2dLayer>(*this, "proj", shape);
}

at::Tensor PatchEmbed::operator()(const at::Tensor& images) const {
  return (*proj_)(images).flatten(2).transpose(1, 2);
}

}  // namespace attnlab::models::vit
