// Swin Transformer (Liu et al., ICCV 2021; SPEC_COMPARISON "Swin window attention and
// shifted-window block"), arch "swin", the layout of microsoft/Swin-Transformer @ f82860b.
// Config keys (fixture names, defaults in brackets): img_size [224] (square; the model runs
// at this size only, as its attn_mask buffers and clamped windows are built for it),
// patch_size [4], embed_dim, depths, num_heads, window_size [7], mlp_ratio [4.0],
// qkv_bias [true], ape [false] (absolute_pos_embed), patch_norm [true], num_classes [1000],
// ln_eps [1e-5]. Training-only keys (drop_path_rate, ...) are ignored.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/backbone.h"
#include "models/model_config.h"

namespace attnlab::models {

std::shared_ptr<Backbone> make_swin(const Json& config);

// The configs of the released ImageNet-1k models: "swin_tiny_patch4_window7_224",
// "swin_small_patch4_window7_224", "swin_base_patch4_window7_224" (its 22k→1k fine-tune
// has the same layout). Throws ModelError for other names.
Json swin_official_config(const std::string& name);
std::vector<std::string> swin_official_names();

}  // namespace attnlab::models
