// The ViT / DeiT family's declaration (model_family.h): the official sizes (SPEC §2.1,
// §2.4) and our Castling-DeiT at the DeiT sizes (§2.5) as one table, the key rules that
// tell a DeiT skeleton and its AnchorFormer and Castling variants apart and read a config
// off their shapes, DeiT's evaluation preprocessing (timm's crop_pct 0.9) and the input
// sizes a ViT runs at (its pos_embed grid resampled). The model itself is in vit.cpp.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "models/model_family.h"
#include "models/vit.h"

namespace attnlab::models {
namespace {

struct VitSize {
  const char* size;  // "tiny"
  int64_t embed_dim, num_heads;
};

const std::vector<VitSize>& vit_sizes() {
  static const std::vector<VitSize> sizes = {
      {"tiny", 192, 3}, {"small", 384, 6}, {"base", 768, 12}};
  return sizes;
}

const char* const kDeitWeights =
    "timm model.safetensors (flat) or the DeiT release .pth ({'model': ...})";
const char* const kNoWeights = "none released (train your own)";

std::vector<PresetEntry> vit_presets() {
  std::vector<PresetEntry> p;
  for (const auto& s : vit_sizes()) {
    const std::string name = std::string("deit_") + s.size + "_patch16_224";
    p.push_back({name, std::string("DeiT-") + s.size + ", softmax ViT (timm layout)",
                 vit_official_config(name), kDeitWeights});
  }
  for (const auto& s : vit_sizes()) {
    const std::string name = std::string("deit_") + s.size + "_distilled_patch16_224";
    p.push_back({name,
                 std::string("DeiT-") + s.size +
                     " distilled, softmax ViT with cls + dist tokens (timm layout)",
                 vit_official_config(name), kDeitWeights});
  }
  for (const auto& s : vit_sizes()) {
    if (std::string(s.size) == "base") continue;  // AnchorFormer has tiny and small
    const std::string name = std::string("anchor_deit_") + s.size + "_distilled_patch16_224";
    p.push_back({name,
                 std::string("AnchorFormer DeiT-") + s.size + ", anchor attention, cls + dist",
                 vit_official_config(name), kNoWeights});
  }
  p.push_back({"castling_deit_tiny", "Castling-DeiT-tiny (our layout), linear-angular attention",
               vit_official_config("castling_deit_tiny"), kNoWeights});
  return p;
}

// A config read off a DeiT-skeleton checkpoint's shapes (`family`: vit, anchor_deit or
// castling_deit): width, depth, patch, image size (from the position tokens), classes,
// MLP ratio; heads are assumed (head dim 64, as every DeiT).
Derivation derive_vit(const ShapeMap& w, const std::string& family) {
  const bool dist = w.count("dist_token") > 0;
  Derivation d =
      Derivation::from_preset(family == "anchor_deit"     ? "anchor_deit_tiny_distilled_patch16_224"
                              : family == "castling_deit" ? "castling_deit_tiny"
                              : dist                      ? "deit_tiny_distilled_patch16_224"
                                                          : "deit_tiny_patch16_224");
  const int64_t c = need_shape(w, "cls_token", 3)[2];
  const auto& patch = need_shape(w, "patch_embed.proj.weight", 4);
  if (patch[2] != patch[3]) throw CannotDerive{};
  const int64_t prefix = dist ? 2 : 1, tokens = need_shape(w, "pos_embed", 3)[1] - prefix;
  const int64_t grid = square_side(tokens);
  d.set("embed_dim", c, "cls_token");
  d.set("depth", count_indices(w, "blocks."), "blocks.N");
  d.set("patch_size", patch[2], "patch_embed.proj.weight");
  d.set("img_size", grid * patch[2], std::to_string(tokens) + " position tokens");
  d.set("num_classes", leading_size(w, "head.weight"), "head.weight");
  d.set("mlp_ratio", static_cast<double>(need_shape(w, "blocks.0.mlp.fc1.weight", 2)[0]) / c,
        "blocks.0.mlp.fc1.weight");
  if (family == "vit") d.set("qkv_bias", w.count("blocks.0.attn.qkv.bias") > 0, "qkv.bias");
  if (c % 64 == 0)
    d.assume("num_heads", c / 64, "head dim 64, as every DeiT");
  else
    d.assume("num_heads", d.r.config["num_heads"], "from " + d.r.preset);
  d.assume("ln_eps", 1e-6, "timm's");
  return d;
}

// Any size whose sides are multiples of the patch: input_size, and the interpolation of
// the pos_embed grid.
Json vit_at_size(Json config, int64_t height, int64_t width, const std::string& interpolation) {
  const std::string arch = get_string(config, "arch", "model", "");
  const int64_t patch = get_int(config, "patch_size", arch, 16);
  if (height % patch != 0 || width % patch != 0)
    throw ModelError("--img-size " + std::to_string(height) + "x" + std::to_string(width) + ": a " +
                     arch + " with patch_size " + std::to_string(patch) +
                     " needs sizes that are multiples of " + std::to_string(patch));
  config["input_size"] = {height, width};
  config["pos_embed_interpolation"] = interpolation;
  return config;
}

}  // namespace

Json vit_official_config(const std::string& name) {
  for (const auto& s : vit_sizes()) {
    const std::string size = s.size;
    Json c = {{"img_size", 224},          {"patch_size", 16},
              {"embed_dim", s.embed_dim}, {"depth", 12},
              {"num_heads", s.num_heads}, {"mlp_ratio", 4.0},
              {"num_classes", 1000},      {"ln_eps", 1e-6}};
    if (name == "deit_" + size + "_patch16_224") {
      c.update({{"arch", "vit"}, {"qkv_bias", true}, {"class_token", true}});
      return c;
    }
    if (name == "deit_" + size + "_distilled_patch16_224") {
      c.update({{"arch", "vit"}, {"qkv_bias", true}, {"class_token", true}, {"distilled", true}});
      return c;
    }
    if (name == "anchor_deit_" + size + "_distilled_patch16_224" && size != "base") {
      c.update({{"arch", "anchor_deit_distilled"}, {"num_anchors", 30}});
      return c;
    }
    // No released Castling-DeiT: the short name ("castling_deit_tiny") is accepted too.
    if (name == "castling_deit_" + size || name == "castling_deit_" + size + "_patch16_224") {
      c.update({{"arch", "castling_deit"},
                {"attention", "castling"},
                {"qkv_bias", false},
                {"sparse_threshold", 0.02},
                {"res_kernel_size", 9}});
      return c;
    }
  }
  throw ModelError("no official vit config named '" + name +
                   "' (known: deit_{tiny,small,base}[_distilled]_patch16_224, "
                   "anchor_deit_{tiny,small}_distilled_patch16_224, "
                   "castling_deit_{tiny,small,base}[_patch16_224])");
}

ModelFamily vit_family() {
  ModelFamily f;
  f.name = "vit";
  f.archs = {"vit", "anchor_deit_distilled", "castling_deit"};
  f.make = make_vit;
  f.mechanism = vit_mechanism;
  f.presets = vit_presets;
  // The DeiT skeleton has top-level blocks.j whatever attention it runs: "DeiT with
  // attention X" (the zoo) carries RALA's qkvo or HiLo's l_q keys there and is still a vit.
  // AnchorFormer's (anchor attention's x_to_emb, and a dist token) and Castling's (its
  // depthwise-conv residual dconv) are told apart first.
  f.key_rules.push_back({"anchor_deit",
                         {"anchor_deit_distilled"},
                         false,
                         [](const KeyNames& k) {
                           return any_key_contains(k, ".attn.x_to_emb.") &&
                                  any_key_contains(k, "dist_token");
                         },
                         [](const ShapeMap& w) { return derive_vit(w, "anchor_deit"); }});
  f.key_rules.push_back({"castling_deit",
                         {"castling_deit"},
                         false,
                         [](const KeyNames& k) { return any_key_contains(k, ".attn.dconv."); },
                         [](const ShapeMap& w) { return derive_vit(w, "castling_deit"); }});
  f.key_rules.push_back({"vit",
                         {"vit"},
                         /*generic=*/true,
                         [](const KeyNames& k) {
                           return any_key_starts_with(k, "blocks.0.") &&
                                  any_key_contains(k, "patch_embed.proj.");
                         },
                         [](const ShapeMap& w) { return derive_vit(w, "vit"); }});
  // timm's DeiT eval: crop_pct 0.9, int(224 / 0.9) = 248; bicubic, ImageNet mean/std.
  f.preprocessing = [](const Json&, int64_t side) { return imagenet_crop_pct(side, 0.9); };
  f.at_size = vit_at_size;
  return f;
}

}  // namespace attnlab::models
