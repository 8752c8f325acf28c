// The CLIP family (openai/CLIP clip/model.py): two archs.
//   "clip_visual_vit"  the image tower alone (models/clip_visual.h); config keys (the
//                      reference's names; defaults): input_resolution (224), patch_size (16),
//                      width, layers, heads, output_dim, ln_eps (1e-5).
//   "clip_full"        the whole CLIP, both towers (models/clip_full.h): what a release is,
//                      and what text prompts need.
// Both run at their input resolution only (CLIP does not interpolate its positions) and
// output an embedding, not class scores. Preprocessing: bicubic resize of the short side to
// the resolution, centre crop, CLIP's mean and std.
#include <ATen/ATen.h>

#include <memory>
#include <string>
#include <vector>

#include "models/clip_full.h"
#include "models/clip_layout.h"
#include "models/clip_visual.h"
#include "models/model_config.h"
#include "models/model_family.h"

namespace attnlab::models {
namespace {

const char* const kClipArch = "clip_visual_vit";

[[noreturn]] void clip_refuse(const std::string& key, const std::string& what) {
  throw ModelError(std::string(kClipArch) + " config: '" + key + "' " + what);
}

ClipVisualSpec read_clip_spec(const Json& c) {
  if (!c.is_object()) throw ModelError(std::string(kClipArch) + " config must be a JSON object");
  ClipVisualSpec s;
  s.resolution = get_int(c, "input_resolution", kClipArch, 224);
  s.patch = get_int(c, "patch_size", kClipArch, 16);
  s.width = get_int(c, "width", kClipArch);
  s.layers = get_int(c, "layers", kClipArch);
  s.heads = get_int(c, "heads", kClipArch);
  s.output_dim = get_int(c, "output_dim", kClipArch);
  s.ln_eps = get_real(c, "ln_eps", kClipArch, 1e-5);
  check_clip_visual_spec(s, std::string(kClipArch) + " config");
  return s;
}

std::shared_ptr<Backbone> make_clip(const Json& config) {
  const std::string arch = get_string(config, "arch", kClipArch, kClipArch);
  if (arch == kClipFullArch) return make_clip_full(config);
  if (arch != kClipArch) clip_refuse("arch", "must be clip_visual_vit or clip_full");
  return std::make_shared<ClipVisual>(read_clip_spec(config), kClipArch);
}

// nn.MultiheadAttention is softmax attention: the registered mechanism (models/clip_visual.cpp).
std::string clip_mechanism(const Json&) {
  return attention::kPlainSoftmaxMechanism;
}

Json clip_visual_b16_config() {
  return {{"arch", kClipArch}, {"input_resolution", 224},
          {"patch_size", 16},  {"width", 768},
          {"layers", 12},      {"heads", 12},
          {"output_dim", 512}, {"ln_eps", 1e-5}};
}

// The OpenAI release ViT-B-16.pt is the whole model; its image tower alone is a preset too
// (tower-only checkpoints, e.g. visual.* exported on its own).
std::vector<PresetEntry> clip_presets() {
  return {
      {"clip_vit_b16", "CLIP ViT-B/16, both towers: the image embedding (512) and text prompts",
       clip_full_b16_config(), "the OpenAI release ViT-B-16.pt (TorchScript archive)"},
      {"clip_vit_b16_visual", "CLIP ViT-B/16 image tower alone; output the image embedding (512)",
       clip_visual_b16_config(), "the visual.* tower of the OpenAI release ViT-B-16.pt"}};
}

// The image tower's shapes: width and patch (conv1), resolution (the positions), layers,
// heads (assumed: head dim 64, as every release), output dim (proj); under each arch's names.
void derive_clip_tower(Derivation& d, const ShapeMap& w, bool full) {
  const auto& conv = need_shape(w, "conv1.weight", 4);
  if (conv[2] != conv[3]) throw CannotDerive{};
  const int64_t width = conv[0], tokens = need_shape(w, "positional_embedding", 2)[0] - 1;
  d.set(full ? "vision_width" : "width", width, "conv1.weight");
  d.set(full ? "vision_patch_size" : "patch_size", conv[2], "conv1.weight");
  d.set(full ? "image_resolution" : "input_resolution", square_side(tokens) * conv[2],
        std::to_string(tokens) + " position tokens");
  d.set(full ? "vision_layers" : "layers", count_indices(w, "transformer.resblocks."),
        "transformer.resblocks.N");
  d.set(full ? "embed_dim" : "output_dim", need_shape(w, "proj", 2)[1], "proj");
  if (width % 64 != 0) throw CannotDerive{};
  d.assume(full ? "vision_heads" : "heads", width / 64, "head dim 64, as every CLIP release");
}

// A whole CLIP (text.* beside the tower): the text tower's sizes as build_model reads them —
// context length (its positions), vocabulary (the embedding's rows), width, layers, heads
// (width / 64).
Derivation derive_clip(const ShapeMap& w) {
  const std::string text = kClipTextPrefix;
  const bool full = w.count(text + "token_embedding.weight") > 0;
  Derivation d = Derivation::from_preset(full ? "clip_vit_b16" : "clip_vit_b16_visual");
  derive_clip_tower(d, w, full);
  if (!full) return d;
  const auto& embedding = need_shape(w, text + "token_embedding.weight", 2);
  d.set("vocab_size", embedding[0], text + "token_embedding.weight");
  d.set("transformer_width", embedding[1], text + "token_embedding.weight");
  d.set("context_length", need_shape(w, text + "positional_embedding", 2)[0],
        text + "positional_embedding");
  d.set("transformer_layers", count_indices(w, text + "transformer.resblocks."),
        text + "transformer.resblocks.N");
  if (embedding[1] % 64 != 0) throw CannotDerive{};
  d.assume("transformer_heads", embedding[1] / 64, "head dim 64, as every CLIP release");
  return d;
}

}  // namespace

ModelFamily clip_family() {
  ModelFamily f;
  f.name = "clip";
  f.archs = {kClipArch, kClipFullArch};
  f.make = make_clip;
  f.mechanism = clip_mechanism;
  f.presets = clip_presets;
  // The image tower's own names, with the text tower under text.* for a whole model (a
  // release's keys once the loader has rewritten them: models/clip_layout.h).
  f.key_rules.push_back({"clip",
                         {kClipArch, kClipFullArch},
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
    const int64_t resolution =
        config.value("input_resolution", config.value("image_resolution", side));
    image::Preprocessing p = imagenet_crop_pct(resolution, 1.0);
    p.mean = {0.48145466f, 0.4578275f, 0.40821073f};
    p.std = {0.26862954f, 0.26130258f, 0.27577711f};
    return p;
  };
  // A whole CLIP model (OpenAI's release): both towers, under clip_full's names.
  f.layouts.push_back(
      {"clip", is_clip_release_layout, [](nn::TensorMap t) {
         ClipRelease release = clip_release_tensors(std::move(t));
         const std::string note = release.note();
         return CheckpointLayout::Rewritten{std::move(release.tensors), "clip", note};  // key rule
       }});
  // A clip_visual_vit config given a whole model's weights takes its image tower.
  f.take_weights = [](const Json& config, nn::TensorMap& weights) -> std::string {
    if (config.value("arch", std::string()) != kClipArch) return "";
    const size_t removed = clip_tower_only(weights);
    return removed == 0 ? ""
                        : "clip_visual_vit: the image tower alone; the text tower's and "
                          "logit_scale's " +
                              std::to_string(removed) + " tensors are left out";
  };
  return f;
}

}  // namespace attnlab::models
