// The ViT / DeiT family (vit.cpp: the model; vit_family.cpp: its presets, recognition,
// preprocessing and sizes). Archs "vit", "anchor_deit_distilled", "castling_deit", "dino_vit",
// "dinov2_vit", "tome_vit" (token merging: models/token_merging.h).
#pragma once

#include <memory>
#include <string>

#include "models/backbone.h"
#include "models/model_config.h"

namespace attnlab::models {

std::shared_ptr<Backbone> make_vit(const Json& config);
// The attention a config runs: its arch's fixed one, else its "attention" (softmax).
std::string vit_mechanism(const Json& config);

// The configs of the official sizes: deit_{tiny,small,base}[_distilled]_patch16_224,
// anchor_deit_{tiny,small}_distilled_patch16_224, castling_deit_{tiny,small,base}
// (also with _patch16_224). Throws ModelError for other names.
Json vit_official_config(const std::string& name);

}  // namespace attnlab::models
