// The ViT family's building blocks (declared and described in vit_blocks.h).
#include "models/vit_blocks.h"

#include <ATen/ATen.h>

#include "models/gelu.h"

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

Block::Block(int64_t dim, int64_t mlp_hidden, double ln_eps,
             std::shared_ptr<attention::AttentionMechanism> attn) {
  // Registration order = timm's state-dict order: norm1, attn, norm2, mlp.
  norm1_ = register_module("norm1", std::make_shared<LayerNormLayer>(dim, ln_eps));
  attn_ = register_module("attn", std::move(attn));
  norm2_ = register_module("norm2", std::make_shared<LayerNormLayer>(dim, ln_eps));
  mlp_ = register_module("mlp", std::make_shared<Mlp>(dim, mlp_hidden));
}

at::Tensor Block::forward(const at::Tensor& x, const attention::TokenLayout& layout,
                          const std::string& path, ForwardRecorder& recorder) {
  const at::Tensor normed = recorder.tap(path + ".norm1", (*norm1_)(x));
  const at::Tensor a = recorder.attend(*attn_, path + ".attn", normed, layout);
  recorder.output("out", path + ".attn", a);
  at::Tensor y = x + a;
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
