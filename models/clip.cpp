// CLIP's image tower (openai/CLIP clip/model.py VisionTransformer), arch "clip_visual_vit",
// with its own parameter names so that a release's visual.* keys load strictly:
//   conv1 (no bias) → tokens [class_embedding, patches] + positional_embedding → ln_pre →
//   transformer.resblocks.i: x += attn(ln_1(x)); x += mlp(ln_2(x)), mlp = c_proj(QuickGELU(
//   c_fc(x))), attn the registered softmax with nn.MultiheadAttention's names (in_proj_weight,
//   in_proj_bias, out_proj; q·kᵀ/√d) → ln_post on the class token → @ proj (a raw
//   (width, output_dim) matrix). CLIP runs its transformer as (tokens, batch, C); the result
//   is the same per token, and the tensors are recorded B×N×C as the fixtures store them.
// Config keys (the reference's names; defaults): input_resolution (224), patch_size (16),
// width, layers, heads, output_dim, ln_eps (1e-5). The model runs at input_resolution only
// (CLIP does not interpolate its positions). The output is an embedding (output_dim), not
// class scores. Its preprocessing: bicubic resize of the short side to the resolution,
// centre crop, CLIP's mean and std.
#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "core/attention/layers.h"
#include "core/attention/registry.h"
#include "core/io/text.h"
#include "core/nn/initial_values.h"
#include "core/nn/state_loading.h"
#include "models/backbone.h"
#include "models/clip_layout.h"
#include "models/model_config.h"
#include "models/model_family.h"
#include "models/norm_layers.h"
#include "models/pre_norm_block.h"

namespace attnlab::models {
namespace {

const char* const kClipArch = "clip_visual_vit";
// nn.MultiheadAttention is softmax attention: the registered mechanism in its
// packed-projection layout (option mha_layout), for the blocks and the family's answer.
const char* const kClipAttention = attention::kPlainSoftmaxMechanism;

[[noreturn]] void clip_refuse(const std::string& key, const std::string& what) {
  throw ModelError(std::string(kClipArch) + " config: '" + key + "' " + what);
}

struct ClipSpec {
  int64_t resolution = 224, patch = 16, width = 0, layers = 0, heads = 0, output_dim = 0;
  double ln_eps = 1e-5;
  int64_t grid() const { return resolution / patch; }
  attention::TokenLayout layout() const {
    attention::TokenLayout l = attention::grid_layout(grid(), grid(), /*stage=*/0);
    l.prefix.push_back("cls");
    return l;
  }
};

ClipSpec read_clip_spec(const Json& c) {
  if (!c.is_object()) throw ModelError(std::string(kClipArch) + " config must be a JSON object");
  ClipSpec s;
  auto positive = [&](const char* key, int64_t fallback) {
    const int64_t v =
        fallback > 0 ? get_int(c, key, kClipArch, fallback) : get_int(c, key, kClipArch);
    if (v < 1) clip_refuse(key, "must be at least 1 (got " + std::to_string(v) + ")");
    return v;
  };
  s.resolution = positive("input_resolution", 224);
  s.patch = positive("patch_size", 16);
  if (s.resolution % s.patch != 0)
    clip_refuse("patch_size", "must divide input_resolution (" + std::to_string(s.patch) + " vs " +
                                  std::to_string(s.resolution) + ")");
  s.width = positive("width", 0);
  s.layers = positive("layers", 0);
  s.heads = positive("heads", 0);
  if (s.width % s.heads != 0)
    clip_refuse("heads", "must divide width (" + std::to_string(s.heads) + " vs " +
                             std::to_string(s.width) + ")");
  s.output_dim = positive("output_dim", 0);
  s.ln_eps = get_real(c, "ln_eps", kClipArch, 1e-5);
  if (!(s.ln_eps > 0)) clip_refuse("ln_eps", "must be positive");
  return s;
}

// c_proj(QuickGELU(c_fc(x))), QuickGELU(x) = x·σ(1.702·x).
class ClipMlp : public torch::nn::Module {
 public:
  ClipMlp(int64_t width, int64_t hidden)
      : c_fc_(attention::add_layer<attention::LinearLayer>(*this, "c_fc", width, hidden, true)),
        c_proj_(
            attention::add_layer<attention::LinearLayer>(*this, "c_proj", hidden, width, true)) {}
  at::Tensor operator()(const at::Tensor& x) const {
    const at::Tensor h = (*c_fc_)(x);
    return (*c_proj_)(h * at::sigmoid(1.702 * h));
  }

 private:
  std::shared_ptr<attention::LinearLayer> c_fc_, c_proj_;
};

// ResidualAttentionBlock: attn, ln_1, mlp, ln_2 (the reference's registration order).
class ClipBlock : public torch::nn::Module {
 public:
  explicit ClipBlock(const ClipSpec& s) {
    attention::MechanismConfig mc;
    mc.dim = s.width;
    mc.heads = s.heads;
    mc.options = {{"qkv_bias", 1.0}, {"mha_layout", 1.0}};
    attn_ = register_module("attn", attention::make_mechanism(kClipAttention, mc));
    ln_1_ = register_module("ln_1", std::make_shared<LayerNormLayer>(s.width, s.ln_eps));
    mlp_ = register_module("mlp", std::make_shared<ClipMlp>(s.width, 4 * s.width));
    ln_2_ = register_module("ln_2", std::make_shared<LayerNormLayer>(s.width, s.ln_eps));
  }
  at::Tensor forward(const at::Tensor& x, const attention::TokenLayout& layout,
                     const std::string& path, ForwardRecorder& recorder) {
    return pre_norm_block_forward(x, layout, path, recorder, "ln_1", *ln_1_, attn_.get(), *ln_2_,
                                  [this](const at::Tensor& t) { return (*mlp_)(t); });
  }

 private:
  std::shared_ptr<attention::AttentionMechanism> attn_;
  std::shared_ptr<LayerNormLayer> ln_1_, ln_2_;
  std::shared_ptr<ClipMlp> mlp_;
};

class ClipVisual : public Backbone {
 public:
  explicit ClipVisual(ClipSpec spec) : spec_(spec) {
    const int64_t c = spec_.width, tokens = spec_.layout().tokens();
    // Own parameters first, as the reference's state dict lists them; CLIP initialises
    // them at scale width^-0.5 (loaded over).
    const double scale = 1.0 / std::sqrt(static_cast<double>(c));
    class_embedding_ = register_parameter("class_embedding", nn::initial_normal({c}, scale));
    positional_embedding_ =
        register_parameter("positional_embedding", nn::initial_normal({tokens, c}, scale));
    proj_ = register_parameter("proj", nn::initial_normal({c, spec_.output_dim}, scale));
    attention::Conv2dLayer::Shape conv;
    conv.in = 3;
    conv.out = c;
    conv.kernel = {spec_.patch, spec_.patch};
    conv.stride = {spec_.patch, spec_.patch};
    conv.bias = false;
    conv1_ = attention::add_layer<attention::Conv2dLayer>(*this, "conv1", conv);
    ln_pre_ = register_module("ln_pre", std::make_shared<LayerNormLayer>(c, spec_.ln_eps));
    auto transformer = std::make_shared<torch::nn::Module>();
    auto resblocks = std::make_shared<torch::nn::Module>();
    for (int64_t i = 0; i < spec_.layers; ++i)
      blocks_.push_back(
          resblocks->register_module(std::to_string(i), std::make_shared<ClipBlock>(spec_)));
    transformer->register_module("resblocks", resblocks);
    register_module("transformer", transformer);
    ln_post_ = register_module("ln_post", std::make_shared<LayerNormLayer>(c, spec_.ln_eps));
  }

  std::string arch() const override { return kClipArch; }
  OutputKind output_kind() const override { return OutputKind::embedding; }
  // The class token ln_post reads (a linear probe's features); no classifier to read with.
  at::Tensor readout_features(const at::Tensor& tokens) const override {
    if (tokens.dim() != 3 || tokens.size(2) != spec_.width)
      throw ModelError(std::string(kClipArch) + ": a block output is (B, N, " +
                       std::to_string(spec_.width) + "), got " + nn::shape_string(tokens.sizes()));
    return tokens.select(1, 0);
  }
  at::Tensor readout_logits(const at::Tensor&) const override {
    throw ModelError(
        embedding_output_note("reading a block out through the classifier", 0, kClipArch));
  }
  std::vector<StageShape> stage_shapes(int64_t, int64_t) const override {
    return {{spec_.layout(), spec_.width}};
  }

 protected:
  ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) override {
    const int64_t r = spec_.resolution;
    if (images.dim() != 4 || images.size(1) != 3 || images.size(2) != r || images.size(3) != r)
      throw ModelError(std::string(kClipArch) + ": expected images (B, 3, " + std::to_string(r) +
                       ", " + std::to_string(r) + ") (CLIP runs at its input_resolution only)");
    ForwardResult result;
    ForwardRecorder recorder(options, result);
    at::Tensor x;
    if (!recorder.skipping()) {
      const int64_t batch = images.size(0);
      const at::Tensor grid = (*conv1_)(images);
      recorder.output("out", "conv1", grid);
      const at::Tensor patches = grid.flatten(2).transpose(1, 2);
      const at::Tensor cls = class_embedding_.view({1, 1, -1}).expand({batch, 1, -1});
      x = (*ln_pre_)(at::cat({cls, patches}, 1) + positional_embedding_);
      recorder.output("out", "ln_pre", x);
    }
    const attention::TokenLayout layout = spec_.layout();
    for (size_t i = 0; i < blocks_.size(); ++i) {
      const std::string path = "transformer.resblocks." + std::to_string(i);
      if (recorder.enter_block(path, x)) x = blocks_[i]->forward(x, layout, path, recorder);
    }
    recorder.check_resumed();
    const at::Tensor pooled = (*ln_post_)(x.select(1, 0));
    recorder.output("out", "ln_post", pooled);
    result.logits = at::matmul(pooled, proj_);
    return result;
  }

 private:
  ClipSpec spec_;
  at::Tensor class_embedding_, positional_embedding_, proj_;
  std::shared_ptr<attention::Conv2dLayer> conv1_;
  std::shared_ptr<LayerNormLayer> ln_pre_, ln_post_;
  std::vector<std::shared_ptr<ClipBlock>> blocks_;
};

std::shared_ptr<Backbone> make_clip(const Json& config) {
  if (get_string(config, "arch", kClipArch, kClipArch) != kClipArch)
    clip_refuse("arch", "must be clip_visual_vit");
  return std::make_shared<ClipVisual>(read_clip_spec(config));
}

std::string clip_mechanism(const Json&) {
  return kClipAttention;
}

// The released image towers (openai/CLIP build_model's sizes).
struct ClipSize {
  const char* name;
  int64_t resolution, patch, width, layers, heads, output_dim;
};

const std::vector<ClipSize>& clip_sizes() {
  static const std::vector<ClipSize> sizes = {{"clip_vit_b16", 224, 16, 768, 12, 12, 512}};
  return sizes;
}

Json clip_config(const ClipSize& s) {
  return {{"arch", kClipArch},          {"input_resolution", s.resolution},
          {"patch_size", s.patch},      {"width", s.width},
          {"layers", s.layers},         {"heads", s.heads},
          {"output_dim", s.output_dim}, {"ln_eps", 1e-5}};
}

std::vector<PresetEntry> clip_presets() {
  std::vector<PresetEntry> p;
  for (const auto& s : clip_sizes())
    p.push_back({s.name, "CLIP ViT-B/16 image tower; output the image embedding (512)",
                 clip_config(s),
                 "the OpenAI release ViT-B-16.pt (TorchScript archive; its visual.* tower)"});
  return p;
}

// A config read off an image tower's shapes: width and patch (conv1), resolution (the
// positions), layers, heads (assumed: head dim 64, as every release), output_dim (proj).
Derivation derive_clip(const ShapeMap& w) {
  Derivation d = Derivation::from_preset("clip_vit_b16");
  const auto& conv = need_shape(w, "conv1.weight", 4);
  if (conv[2] != conv[3]) throw CannotDerive{};
  const int64_t width = conv[0], tokens = need_shape(w, "positional_embedding", 2)[0] - 1;
  d.set("width", width, "conv1.weight");
  d.set("patch_size", conv[2], "conv1.weight");
  d.set("input_resolution", square_side(tokens) * conv[2],
        std::to_string(tokens) + " position tokens");
  d.set("layers", count_indices(w, "transformer.resblocks."), "transformer.resblocks.N");
  d.set("output_dim", need_shape(w, "proj", 2)[1], "proj");
  if (width % 64 != 0) throw CannotDerive{};
  d.assume("heads", width / 64, "head dim 64, as every CLIP release");
  return d;
}

}  // namespace

ModelFamily clip_family() {
  ModelFamily f;
  f.name = "clip";
  f.archs = {kClipArch};
  f.make = make_clip;
  f.mechanism = clip_mechanism;
  f.presets = clip_presets;
  // The image tower's own names (a whole release's visual.* keys are the tower once the
  // loader has taken it out: models/clip_layout.h).
  f.key_rules.push_back({"clip",
                         {kClipArch},
                         false,
                         [](const KeyNames& k) {
                           const bool tower = any_key_starts_with(k, "conv1.") &&
                                              any_key_starts_with(k, "class_embedding") &&
                                              any_key_starts_with(k, "transformer.resblocks.");
                           const bool whole = any_key_starts_with(k, "visual.conv1.") &&
                                              any_key_starts_with(k, "visual.class_embedding");
                           return tower || whole;
                         },
                         derive_clip});
  // clip/clip.py _transform: Resize(n_px, bicubic), CenterCrop(n_px), CLIP's mean and std.
  // The model runs at its input_resolution only, whatever side is asked.
  f.preprocessing = [](const Json& config, int64_t side) {
    image::Preprocessing p = imagenet_crop_pct(config.value("input_resolution", side), 1.0);
    p.mean = {0.48145466f, 0.4578275f, 0.40821073f};
    p.std = {0.26862954f, 0.26130258f, 0.27577711f};
    return p;
  };
  // A whole CLIP model (OpenAI's release): its image tower.
  f.layouts.push_back(
      {"clip", is_clip_release_layout, [](nn::TensorMap t) {
         ClipTower tower = clip_image_tower(std::move(t));
         const std::string note = tower.note();
         return CheckpointLayout::Rewritten{std::move(tower.tensors), "clip", note};  // key rule
       }});
  return f;
}

}  // namespace attnlab::models
