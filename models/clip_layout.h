// A whole CLIP release (openai/CLIP: image tower under visual.*, text tower and
// logit_scale at the top level) opens as its image tower: the visual.* keys without the
// prefix, the rest left out and counted, so the loader, recognition and the analyses see
// the tower's own names (models/clip.cpp).
#pragma once

#include <cstddef>
#include <string>

#include "core/nn/state_loading.h"

namespace attnlab::models {

// True when the keys are a whole CLIP model (visual.conv1.weight and
// visual.class_embedding among them).
bool is_clip_release_layout(const nn::TensorMap& tensors);

struct ClipTower {
  nn::TensorMap tensors;     // the visual.* tensors, prefix removed
  size_t left_out = 0;       // the text tower's and logit_scale's tensors
  std::string note() const;  // "a whole CLIP model: its image tower (visual.*), ..."
};
ClipTower clip_image_tower(nn::TensorMap tensors);

}  // namespace attnlab::models
