// Named presets, timm-style: each official model size with its model config and the
// evaluation preprocessing its paper's code uses (SPEC §2), plus where its released
// weights come from. `attnlab classify --preset`, `infer --preset`, the GUI's model menu
// and the manifest tests all start here. Each family declares its own (model_family.h);
// this is their union, in registry order.
#pragma once

#include <string>
#include <vector>

#include "core/image/preprocess.h"
#include "models/model_config.h"

namespace attnlab::models {

struct Preset {
  std::string name;         // "deit_tiny_patch16_224"
  std::string description;  // one line: family, size, what it is
  Json config;              // the model config (what make_backbone takes)
  image::Preprocessing preprocessing;
  std::string weights;  // where the official weights come from (or "none released")
};

const std::vector<Preset>& presets();
// Throws ModelError listing the preset names.
const Preset& find_preset(const std::string& name);
// nullptr when `name` is no preset.
const Preset* preset_named(const std::string& name);

// The evaluation preprocessing for a model config with no preset: its family's paper
// pipeline (ModelFamily::preprocessing) at the config's img_size (default 224) — DeiT-style
// archs (vit, anchor_deit_distilled, castling_deit) resize the short side to img_size/0.9
// (248 for 224), LITv2, RAVLT, Swin and archs of no family to img_size·256/224; bicubic,
// centre crop img_size, ImageNet mean/std. A config with its own "preprocessing" object ({"resize",
// "crop", "filter", "mean", "std"}; models trained by `attnlab train` record one) gets exactly
// that.
image::Preprocessing default_preprocessing(const Json& config);

// The same pipeline for an input of height × width (--img-size): the short image side
// resized to max(height, width) / crop_pct (the family's crop_pct as above; for a config
// with its own "preprocessing", resize / crop), then a centre crop of height × width.
// For a square size this is exactly the family pipeline at that size.
image::Preprocessing preprocessing_at_size(const Json& config, const image::Preprocessing& base,
                                           int64_t height, int64_t width);

// `config` run at height × width (ModelFamily::at_size): a ViT gets input_size [H, W] (its
// pos_embed grid is resampled, pos_embed_interpolation `interpolation`: bicubic |
// bicubic_antialias); LITv2 and RAVLT run at any size their strides allow (LITv2: both sides at
// least patch · 2^(stages-1)) and record it; Swin runs at its own size only. Throws ModelError
// naming the size and the constraint it breaks.
Json config_at_size(Json config, int64_t height, int64_t width, const std::string& interpolation);

}  // namespace attnlab::models
