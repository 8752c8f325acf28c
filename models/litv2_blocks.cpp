// LITv2 blocks: each module registers its children in the reference's order, so that
// named_parameters() + named_buffers() are exactly the reference state-dict keys.
#include "models/litv2_blocks.h"

#include <ATen/ATen.h>

#include "core/attention/registry.h"
#include "models/gelu.h"
#include "models/pre_norm_block.h"

namespace attnlab::models::litv2 {

at::Tensor tokens_to_image(const at::Tensor& x, int64_t height, int64_t width) {
  return x.transpose(1, 2).reshape({x.size(0), x.size(2), height, width});
}

at::Tensor image_to_tokens(const at::Tensor& x) {
  return x.flatten(2).transpose(1, 2);
}

PatchEmbed::PatchEmbed(int64_t patch, int64_t dim, double eps) {
  attention::Conv2dLayer::Shape s;
  s.in = 3;
  s.out = dim;
  s.kernel = {patch, patch};
  s.stride = {patch, patch};
  proj = attention::add_layer<attention::Conv2dLayer>(*this, "proj", s);
  norm = attention::add_layer<LayerNormLayer>(*this, "norm", dim, eps);
}

at::Tensor PatchEmbed::operator()(const at::Tensor& images, int64_t& height, int64_t& width) const {
  at::Tensor x = (*proj)(images);
  height = x.size(2);
  width = x.size(3);
  return (*norm)(image_to_tokens(x));
}

DWMlp::DWMlp(int64_t dim, int64_t hidden) {
  fc1 = attention::add_layer<attention::LinearLayer>(*this, "fc1", dim, hidden, true);
  attention::Conv2dLayer::Shape s;
  s.in = hidden;
  s.out = hidden;
  s.kernel = {3, 3};
  s.padding = {1, 1};
  s.groups = hidden;
  // The reference's DWConv wrapper holds the conv as its own "dwconv".
  auto wrapper = register_module("dwconv", std::make_shared<torch::nn::Module>());
  dwconv = attention::add_layer<attention::Conv2dLayer>(*wrapper, "dwconv", s);
  fc2 = attention::add_layer<attention::LinearLayer>(*this, "fc2", hidden, dim, true);
}

at::Tensor DWMlp::operator()(const at::Tensor& x, int64_t height, int64_t width) const {
  at::Tensor h = (*fc1)(x);
  h = image_to_tokens((*dwconv)(tokens_to_image(h, height, width)));
  return (*fc2)(models::gelu(h));
}

Block::Block(const BlockShape& s) {
  if (s.window > 0) {
    norm1 = attention::add_layer<LayerNormLayer>(*this, "norm1", s.dim, s.ln_eps);
    attention::MechanismConfig c;
    c.dim = s.dim;
    c.heads = s.heads;
    if (s.attention == "hilo")
      c.options = {{"window", static_cast<double>(s.window)},
                   {"alpha", s.alpha},
                   {"qkv_bias", s.qkv_bias ? 1.0 : 0.0},
                   {"lofi_heads", static_cast<double>(s.lofi_heads)}};
    else
      c.options = s.attention_options;
    attn = register_module("attn", attention::make_mechanism(s.attention, c));
  }
  norm2 = attention::add_layer<LayerNormLayer>(*this, "norm2", s.dim, s.ln_eps);
  mlp = attention::add_layer<DWMlp>(*this, "mlp", s.dim, s.hidden);
}

at::Tensor Block::forward(const at::Tensor& x_in, const attention::TokenLayout& layout,
                          const std::string& path, ForwardRecorder& recorder) {
  const auto norm = [](const std::shared_ptr<LayerNormLayer>& n) {
    return [&n](const at::Tensor& t) { return (*n)(t); };
  };
  return pre_norm_block_forward(
      x_in, layout, path, recorder, "norm1", norm(norm1), attn.get(), norm(norm2),
      [&](const at::Tensor& t) { return (*mlp)(t, layout.height, layout.width); });
}

Downsample::Downsample(int64_t in, int64_t out) {
  DeformConvGeometry g;
  g.stride = {2, 2};
  dconv = register_module(
      "dconv", std::make_shared<DeformConv2dPack>(in, out, std::array<int64_t, 2>{2, 2}, g));
  norm_layer = attention::add_layer<BatchNorm2dLayer>(*this, "norm_layer", out);
}

at::Tensor Downsample::operator()(const at::Tensor& x, int64_t& height, int64_t& width) {
  at::Tensor y = models::gelu((*norm_layer)((*dconv)(tokens_to_image(x, height, width))));
  height = y.size(2);
  width = y.size(3);
  return image_to_tokens(y);
}

}  // namespace attnlab::models::litv2
