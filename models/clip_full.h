// The whole CLIP (arch "clip_full"): the image tower (models/clip_visual.h) is the model
// every image analysis sees, under the tower's own names; the text tower
// (models/clip_text.h) is its child "text" and logit_scale its parameter, so one strict load
// takes a whole release (rewritten by models/clip_layout.h: visual.* → the tower's names,
// the text keys → text.*, logit_scale kept). Config keys: CLIP's constructor arguments —
// embed_dim, image_resolution, vision_layers, vision_width, vision_patch_size, vision_heads
// (default vision_width / 64, as CLIP builds it), context_length, vocab_size,
// transformer_width, transformer_heads (default transformer_width / 64), transformer_layers —
// and ln_eps (1e-5).
#pragma once

#include <memory>

#include "models/model_config.h"

namespace attnlab::models {

class Backbone;

extern const char* const kClipFullArch;  // "clip_full"

std::shared_ptr<Backbone> make_clip_full(const Json& config);

// The released CLIP ViT-B/16 as a clip_full config (openai/CLIP build_model's sizes).
Json clip_full_b16_config();

}  // namespace attnlab::models
