// See clip_layout.h.
#include "models/clip_layout.h"

#include <ATen/ATen.h>

#include <utility>

namespace attnlab::models {

namespace {
const std::string kClipVisualPrefix = "visual.";
}  // namespace

bool is_clip_release_layout(const nn::TensorMap& tensors) {
  return tensors.count(kClipVisualPrefix + "conv1.weight") > 0 &&
         tensors.count(kClipVisualPrefix + "class_embedding") > 0;
}

ClipTower clip_image_tower(nn::TensorMap tensors) {
  ClipTower tower;
  for (auto& [name, t] : tensors) {
    if (name.rfind(kClipVisualPrefix, 0) == 0)
      tower.tensors[name.substr(kClipVisualPrefix.size())] = std::move(t);
    else
      ++tower.left_out;
  }
  return tower;
}

std::string ClipTower::note() const {
  return "a whole CLIP model: opened as its image tower (visual.*); the text tower's " +
         std::to_string(left_out) + " tensors are left out";
}

}  // namespace attnlab::models
