// See clip_text.h. The attention is nn.MultiheadAttention's (packed in_proj_weight [q|k|v],
// (q/√d)·kᵀ + M, softmax, @ v, out_proj) with M the causal mask; it goes through the shared
// softmax kernel with the mask as a score bias. It is deliberately not a registered
// mechanism: those are image attentions, and every analysis that walks a model's mechanisms
// (head ablation, the memory estimate) must see the image tower's alone.
#include "models/clip_text.h"

#include <cmath>
#include <limits>

#include "core/attention/fused_attention.h"
#include "core/attention/layers.h"
#include "core/attention/mechanism.h"
#include "core/nn/initial_values.h"
#include "core/nn/state_loading.h"
#include "models/backbone.h"
#include "models/clip_visual.h"

namespace attnlab::models {

void check_clip_text_spec(const ClipTextSpec& s, const std::string& who) {
  const std::pair<const char*, int64_t> sizes[] = {
      {"context_length", s.context},  {"vocab_size", s.vocabulary},
      {"transformer_width", s.width}, {"transformer_layers", s.layers},
      {"transformer_heads", s.heads}, {"embed_dim", s.embed}};
  for (const auto& [name, v] : sizes)
    if (v < 1)
      throw ModelError(who + ": '" + name + "' must be at least 1 (got " + std::to_string(v) + ")");
  if (s.width % s.heads != 0)
    throw ModelError(who + ": 'transformer_heads' must divide 'transformer_width' (" +
                     std::to_string(s.heads) + " vs " + std::to_string(s.width) + ")");
  if (!(s.ln_eps > 0)) throw ModelError(who + ": 'ln_eps' must be positive");
}

// ResidualAttentionBlock with attn_mask: attn, ln_1, mlp, ln_2.
class ClipTextTower::Block : public torch::nn::Module {
 public:
  explicit Block(const ClipTextSpec& s) : heads_(s.heads) {
    auto attn = register_module("attn", std::make_shared<torch::nn::Module>());
    // nn.MultiheadAttention's initialisation (Xavier-uniform, zero bias); loaded over.
    const double bound = std::sqrt(6.0 / static_cast<double>(4 * s.width));
    in_proj_weight_ = attn->register_parameter("in_proj_weight",
                                               nn::initial_uniform({3 * s.width, s.width}, bound));
    in_proj_bias_ = attn->register_parameter("in_proj_bias", at::zeros({3 * s.width}));
    out_proj_ =
        attention::add_layer<attention::LinearLayer>(*attn, "out_proj", s.width, s.width, true);
    ln_1_ = register_module("ln_1", std::make_shared<LayerNormLayer>(s.width, s.ln_eps));
    mlp_ = register_module("mlp", std::make_shared<ClipMlp>(s.width, 4 * s.width));
    ln_2_ = register_module("ln_2", std::make_shared<LayerNormLayer>(s.width, s.ln_eps));
  }
  // x (B, T, W); mask (T, T) additive. `probabilities`, when given, receives the per-head
  // softmax (B, h, T, T).
  at::Tensor forward(const at::Tensor& x, const at::Tensor& mask, at::Tensor* probabilities) const {
    const at::Tensor normed = (*ln_1_)(x);
    auto [q, k, v] =
        attention::split_qkv(at::linear(normed, in_proj_weight_, in_proj_bias_), heads_);
    const double scale = 1.0 / std::sqrt(static_cast<double>(q.size(-1)));
    attention::ScoreForm form;
    form.scale_queries = true;  // MHA scales q before the product
    form.biases = {mask};
    const at::Tensor mixed = attention::softmax_attention(q, k, v, scale, form);
    if (probabilities)
      *probabilities = at::softmax(at::matmul(q * scale, k.transpose(-2, -1)) + mask, -1);
    const at::Tensor y = x + (*out_proj_)(attention::merge_heads(mixed));
    return y + (*mlp_)((*ln_2_)(y));
  }

 private:
  int64_t heads_;
  at::Tensor in_proj_weight_, in_proj_bias_;
  std::shared_ptr<attention::LinearLayer> out_proj_;
  std::shared_ptr<LayerNormLayer> ln_1_, ln_2_;
  std::shared_ptr<ClipMlp> mlp_;
};

ClipTextTower::ClipTextTower(const ClipTextSpec& spec) : spec_(spec) {
  check_clip_text_spec(spec_, "clip_full config");
  // CLIP.initialize_parameters' scales (loaded over): token 0.02, positions 0.01,
  // projection width^-0.5.
  positional_embedding_ = register_parameter(
      "positional_embedding", nn::initial_normal({spec_.context, spec_.width}, 0.01));
  text_projection_ = register_parameter(
      "text_projection",
      nn::initial_normal({spec_.width, spec_.embed}, 1.0 / std::sqrt(double(spec_.width))));
  auto transformer = std::make_shared<torch::nn::Module>();
  auto resblocks = std::make_shared<torch::nn::Module>();
  for (int64_t i = 0; i < spec_.layers; ++i)
    blocks_.push_back(
        resblocks->register_module(std::to_string(i), std::make_shared<Block>(spec_)));
  transformer->register_module("resblocks", resblocks);
  register_module("transformer", transformer);
  auto token_embedding = register_module("token_embedding", std::make_shared<torch::nn::Module>());
  token_embedding_ = token_embedding->register_parameter(
      "weight", nn::initial_normal({spec_.vocabulary, spec_.width}, 0.02));
  ln_final_ =
      register_module("ln_final", std::make_shared<LayerNormLayer>(spec_.width, spec_.ln_eps));
}

TextEncoding ClipTextTower::encode(const at::Tensor& tokens, bool record) const {
  const std::string want = "(B, " + std::to_string(spec_.context) + ")";
  if (!tokens.defined() || tokens.dim() != 2 || tokens.size(1) != spec_.context)
    throw ModelError("text tokens must be " + want + " ids, got " +
                     (tokens.defined() ? nn::shape_string(tokens.sizes()) : std::string("none")));
  if (tokens.is_floating_point() || tokens.is_complex() || tokens.scalar_type() == at::kBool)
    throw ModelError("text tokens must be integer ids, got " +
                     std::string(c10::toString(tokens.scalar_type())));
  const at::Tensor ids = tokens.to(token_embedding_.device(), at::kLong);
  if (ids.numel() > 0) {
    const int64_t lo = ids.min().item<int64_t>(), hi = ids.max().item<int64_t>();
    if (lo < 0 || hi >= spec_.vocabulary)
      throw ModelError("text tokens must be ids in [0, " + std::to_string(spec_.vocabulary) +
                       "), got " + std::to_string(lo < 0 ? lo : hi));
  }
  TextEncoding out;
  const at::Tensor embedded =
      token_embedding_.index_select(0, ids.flatten()).view({ids.size(0), ids.size(1), spec_.width});
  if (record) out.outputs["out.token_embedding"] = embedded.detach();
  at::Tensor x = embedded + positional_embedding_;
  const at::Tensor mask = at::full({spec_.context, spec_.context},
                                   -std::numeric_limits<double>::infinity(), x.options())
                              .triu(1);
  for (size_t i = 0; i < blocks_.size(); ++i) {
    const std::string path = "transformer.resblocks." + std::to_string(i);
    at::Tensor probabilities;
    const bool last = i + 1 == blocks_.size();
    x = blocks_[i]->forward(x, mask, record && last ? &probabilities : nullptr);
    if (record) out.outputs["out." + path] = x.detach();
    if (record && last) out.outputs["attn." + path] = probabilities.detach();
  }
  x = (*ln_final_)(x);
  if (record) out.outputs["out.ln_final"] = x.detach();
  // argmax returns the first largest id: the end token, or an earlier spelled-out one.
  out.eot_index = ids.argmax(-1);
  const at::Tensor pooled =
      x.gather(1, out.eot_index.view({-1, 1, 1}).expand({-1, 1, spec_.width})).squeeze(1);
  if (record) out.outputs["text_pooled"] = pooled.detach();
  out.features = at::matmul(pooled, text_projection_);
  return out;
}

}  // namespace attnlab::models
