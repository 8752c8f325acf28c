// The ViT family's building blocks (declared and described in vit_blocks.h).
#include "models/vit_blocks.h"

#include <ATen/ATen.h>

#include <tuple>

#include "core/attention/capabilities.h"
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
                              bool prop_attn, const attention::TokenLayout& inputs,
                              const std::string& path, ForwardRecorder& recorder) {
  const at::Tensor normed = recorder.tap(path + ".norm1", (*norm1_)(x));
  auto [a, metric] = attn_->forward(normed, prop_attn ? state.size : at::Tensor());
  // A traced forward presents the layer on the input tokens (owner: argmax of the 0/1
  // source's one 1 per input token), its recorded output included, so the analyses read
  // every layer on one grid; an untraced one records the merged tokens (the fixture's).
  std::shared_ptr<attention::AttentionTrace> trace;
  if (recorder.tracing()) {
    const at::Tensor owner = state.source.argmax(1);
    auto view = attn_->trace_on_inputs(normed, owner, inputs, recorder.trace_options());
    recorder.output("out", path + ".attn", view.output);
    // forward_traced hands back a trace no one else holds yet: ToMe adds what it knows.
    trace = std::const_pointer_cast<attention::AttentionTrace>(view.trace);
    trace->capabilities.push_back(attention::capability::kMergedTokens);
    trace->internals["tome.owner"] = owner;
    trace->internals["tome.size"] = state.size.detach();
  } else {
    recorder.output("out", path + ".attn", a);
  }
  at::Tensor y = x + a;
  const tome::TomeMatch match = tome::tome_match(metric, r);
  state.source = tome::tome_merge_source(match, state.source);
  std::tie(y, state.size) = tome::tome_merge_weighted(match, y, state.size);
  if (state.source.defined()) recorder.output("source", path, state.source);
  if (trace) {
    trace->internals["tome.merged_owner"] = state.source.argmax(1);
    recorder.trace(path + ".attn", trace);
  }
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
