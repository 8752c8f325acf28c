// A whole CLIP release (openai/CLIP: image tower under visual.*, text tower and
// logit_scale at the top level) opens as arch clip_full (models/clip_full.h): the visual.*
// keys without the prefix (the image tower's own names, which every image analysis and
// recognition read), the text tower's keys under text.*, logit_scale as it is; the
// build_model extras (input_resolution, context_length, vocab_size) are dropped, as CLIP
// does. A clip_visual_vit config takes the image tower of such weights alone
// (clip_tower_only).
#pragma once

#include <cstddef>
#include <string>

#include "core/nn/state_loading.h"

namespace attnlab::models {

// True when the keys are a whole CLIP model (visual.conv1.weight and
// visual.class_embedding among them).
bool is_clip_release_layout(const nn::TensorMap& tensors);

struct ClipRelease {
  nn::TensorMap tensors;     // under clip_full's names
  size_t text_tensors = 0;   // moved under text.*
  size_t dropped = 0;        // build_model's extras
  std::string note() const;  // "a whole CLIP model: both towers ..."
};
ClipRelease clip_release_tensors(nn::TensorMap tensors);

// The prefix clip_full keeps its text tower under, and its log scale's name.
extern const char* const kClipTextPrefix;  // "text."
extern const char* const kClipLogitScale;  // "logit_scale"

// Weights in clip_full's names reduced to the image tower's (a clip_visual_vit config on a
// whole release): the text tower's and logit_scale's tensors removed; returns how many.
size_t clip_tower_only(nn::TensorMap& tensors);

}  // namespace attnlab::models
