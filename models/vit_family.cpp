// The ViT / DeiT family's declaration (model_family.h): the official sizes (SPEC §2.1,
// §2.4) and our Castling-DeiT at the DeiT sizes (§2.5) as one table, the key rules that
// tell a DeiT skeleton and its AnchorFormer and Castling variants apart and read a config
// off their shapes, DeiT's evaluation preprocessing (timm's crop_pct 0.9) and the input
// sizes a ViT runs at (its pos_embed grid resampled). The model itself is in vit.cpp.
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "models/dino_layout.h"
#include "models/hf_layout.h"
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

// The DINO and DINOv2 releases (facebookresearch/dino hubconf.py; dinov2/hub/backbones.py):
// image side of pos_embed's grid, patch, width, heads, registers.
struct DinoSize {
  const char* name;
  const char* arch;
  int64_t img_size, patch_size, embed_dim, num_heads, registers;
  const char* description;
  const char* weights;
};

const std::vector<DinoSize>& dino_sizes() {
  static const std::vector<DinoSize> sizes = {
      {"dino_vits16", "dino_vit", 224, 16, 384, 6, 0,
       "DINO ViT-S/16, self-supervised softmax ViT; output the cls embedding",
       "the DINO release dino_deitsmall16_pretrain.pth (bare state dict)"},
      {"dino_vitb16", "dino_vit", 224, 16, 768, 12, 0,
       "DINO ViT-B/16, self-supervised softmax ViT; output the cls embedding",
       "the DINO release dino_vitbase16_pretrain.pth (bare state dict)"},
      {"dino_vits8", "dino_vit", 224, 8, 384, 6, 0,
       "DINO ViT-S/8, self-supervised softmax ViT; output the cls embedding",
       "the DINO release dino_deitsmall8_pretrain.pth (bare state dict)"},
      {"dinov2_vits14", "dinov2_vit", 518, 14, 384, 6, 0,
       "DINOv2 ViT-S/14, LayerScale; output the cls embedding",
       "the DINOv2 release dinov2_vits14_pretrain.pth (bare state dict)"},
      {"dinov2_vitb14", "dinov2_vit", 518, 14, 768, 12, 0,
       "DINOv2 ViT-B/14, LayerScale; output the cls embedding",
       "the DINOv2 release dinov2_vitb14_pretrain.pth (bare state dict)"},
      {"dinov2_vits14_reg", "dinov2_vit", 518, 14, 384, 6, 4,
       "DINOv2 ViT-S/14 with 4 registers, LayerScale; output the cls embedding",
       "the DINOv2 release dinov2_vits14_reg4_pretrain.pth (bare state dict)"},
  };
  return sizes;
}

// The config of a DINO / DINOv2 release. DINOv2's pos_embed is trained at 518 (37×37);
// its evaluation runs at 224, the grid resampled (input_size).
Json dino_config(const DinoSize& d) {
  Json c = {{"arch", d.arch},
            {"img_size", d.img_size},
            {"patch_size", d.patch_size},
            {"embed_dim", d.embed_dim},
            {"depth", 12},
            {"num_heads", d.num_heads},
            {"mlp_ratio", 4.0},
            {"qkv_bias", true},
            {"ln_eps", 1e-6},
            {"interpolate_offset", 0.1}};
  if (std::string(d.arch) == "dino_vit") {
    c["num_classes"] = 0;
    return c;
  }
  c.update({{"init_values", 1.0},
            {"ffn_layer", "mlp"},
            {"block_chunks", 0},
            {"num_register_tokens", d.registers},
            {"input_size", {224, 224}}});
  if (d.registers > 0)  // the _reg releases: offset 0, antialiased
    c.update({{"interpolate_offset", 0.0}, {"interpolate_antialias", true}});
  return c;
}

bool is_dino_arch(const std::string& arch) {
  return arch == "dino_vit" || arch == "dinov2_vit";
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
  for (const auto& d : dino_sizes())
    p.push_back({d.name, d.description, vit_official_config(d.name), d.weights});
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

// A config read off a DINO (`v2` false) or DINOv2 checkpoint's shapes: width, depth, patch,
// the trained image side (pos_embed's tokens; registers carry none), registers, LayerScale,
// MLP ratio, a DINO head's classes; heads assumed at head dim 64, as every release.
Derivation derive_dino(const ShapeMap& w, bool v2) {
  const bool registers = w.count("register_tokens") > 0;
  Derivation d = Derivation::from_preset(!v2         ? "dino_vits16"
                                         : registers ? "dinov2_vits14_reg"
                                                     : "dinov2_vits14");
  const int64_t c = need_shape(w, "cls_token", 3)[2];
  const auto& patch = need_shape(w, "patch_embed.proj.weight", 4);
  if (patch[2] != patch[3]) throw CannotDerive{};
  const int64_t tokens = need_shape(w, "pos_embed", 3)[1] - 1;
  d.set("embed_dim", c, "cls_token");
  d.set("depth", count_indices(w, "blocks."), "blocks.N");
  d.set("patch_size", patch[2], "patch_embed.proj.weight");
  d.set("img_size", square_side(tokens) * patch[2], std::to_string(tokens) + " position tokens");
  d.set("mlp_ratio", static_cast<double>(need_shape(w, "blocks.0.mlp.fc1.weight", 2)[0]) / c,
        "blocks.0.mlp.fc1.weight");
  d.set("qkv_bias", w.count("blocks.0.attn.qkv.bias") > 0, "qkv.bias");
  if (v2) {
    d.set("num_register_tokens", registers ? need_shape(w, "register_tokens", 3)[1] : 0,
          "register_tokens");
    if (w.count("blocks.0.ls1.gamma") > 0)
      d.assume("init_values", 1.0, "LayerScale present (blocks.i.ls1.gamma); loaded over");
    else
      d.set("init_values", nullptr, "no blocks.i.ls1.gamma");
    d.assume("input_size", d.r.config["input_size"], "DINOv2's evaluation size");
  } else {
    d.set("num_classes", w.count("head.weight") > 0 ? leading_size(w, "head.weight") : 0,
          "head.weight");
  }
  if (c % 64 != 0) throw CannotDerive{};
  d.assume("num_heads", c / 64, "head dim 64, as every DINO and DINOv2");
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
  // DINO and DINOv2 resample their positions as their own code does (their offset and
  // antialiasing); the others as asked.
  if (!is_dino_arch(arch)) config["pos_embed_interpolation"] = interpolation;
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
  for (const auto& d : dino_sizes())
    if (name == d.name) return dino_config(d);
  throw ModelError("no official vit config named '" + name +
                   "' (known: deit_{tiny,small,base}[_distilled]_patch16_224, "
                   "anchor_deit_{tiny,small}_distilled_patch16_224, "
                   "castling_deit_{tiny,small,base}[_patch16_224], dino_vit{s16,b16,s8}, "
                   "dinov2_vit{s14,b14,s14_reg})");
}

ModelFamily vit_family() {
  ModelFamily f;
  f.name = "vit";
  f.archs = {"vit", "anchor_deit_distilled", "castling_deit", "dino_vit", "dinov2_vit", "tome_vit"};
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
  // DINOv2: LayerScale gammas, register tokens or its mask_token in a DeiT skeleton.
  f.key_rules.push_back({"dinov2",
                         {"dinov2_vit"},
                         false,
                         [](const KeyNames& k) {
                           return any_key_starts_with(k, "blocks.0.") &&
                                  (any_key_contains(k, ".ls1.gamma") ||
                                   any_key_starts_with(k, "register_tokens") ||
                                   any_key_starts_with(k, "mask_token"));
                         },
                         [](const ShapeMap& w) { return derive_dino(w, true); }});
  // DINO: the DeiT skeleton with no head (its releases are backbones: num_classes 0).
  f.key_rules.push_back({"dino",
                         {"dino_vit"},
                         false,
                         [](const KeyNames& k) {
                           return any_key_starts_with(k, "blocks.0.") &&
                                  any_key_contains(k, "patch_embed.proj.") &&
                                  any_key_starts_with(k, "cls_token") &&
                                  !any_key_starts_with(k, "head.");
                         },
                         [](const ShapeMap& w) { return derive_dino(w, false); }});
  f.key_rules.push_back({"vit",
                         {"vit"},
                         /*generic=*/true,
                         [](const KeyNames& k) {
                           return any_key_starts_with(k, "blocks.0.") &&
                                  any_key_contains(k, "patch_embed.proj.");
                         },
                         [](const ShapeMap& w) { return derive_vit(w, "vit"); }});
  // timm's DeiT eval: crop_pct 0.9, int(224 / 0.9) = 248; bicubic, ImageNet mean/std.
  // DINO's and DINOv2's evaluation: resize 256, crop 224 (crop_pct 0.875), bicubic.
  f.preprocessing = [](const Json& config, int64_t side) {
    return imagenet_crop_pct(side, is_dino_arch(config.value("arch", "")) ? 0.875 : 0.9);
  };
  f.at_size = vit_at_size;
  // transformers' ViTModel / ViTForImageClassification / DeiT* keys (a Hugging Face
  // checkpoint), and a DINO or DINOv2 training checkpoint (its teacher's backbone).
  f.layouts.push_back(
      {"transformers", is_hf_vit_layout, [](nn::TensorMap t) {
         return CheckpointLayout::Rewritten{hf_vit_to_timm(std::move(t)), "vit", ""};
       }});
  f.layouts.push_back({"dino_training", is_dino_training_layout, [](nn::TensorMap t) {
                         DinoBackbone b = dino_training_backbone(std::move(t));
                         const std::string note = b.note();
                         return CheckpointLayout::Rewritten{std::move(b.tensors), "", note};
                       }});
  return f;
}

}  // namespace attnlab::models
