// See clip_layout.h.
#include "models/clip_layout.h"

#include <ATen/ATen.h>

#include <utility>

namespace attnlab::models {

const char* const kClipTextPrefix = "text.";
const char* const kClipLogitScale = "logit_scale";

namespace {
const std::string kClipVisualPrefix = "visual.";
bool is_build_model_extra(const std::string& name) {
  return name == "input_resolution" || name == "context_length" || name == "vocab_size";
}
}  // namespace

bool is_clip_release_layout(const nn::TensorMap& tensors) {
  return tensors.count(kClipVisualPrefix + "conv1.weight") > 0 &&
         tensors.count(kClipVisualPrefix + "class_embedding") > 0;
}

ClipRelease clip_release_tensors(nn::TensorMap tensors) {
  ClipRelease r;
  for (auto& [name, t] : tensors) {
    if (name.rfind(kClipVisualPrefix, 0) == 0) {
      r.tensors[name.substr(kClipVisualPrefix.size())] = std::move(t);
    } else if (name == kClipLogitScale) {
      r.tensors[name] = std::move(t);
    } else if (is_build_model_extra(name)) {
      ++r.dropped;
    } else {
      r.tensors[kClipTextPrefix + name] = std::move(t);
      ++r.text_tensors;
    }
  }
  return r;
}

std::string ClipRelease::note() const {
  std::string note =
      "a whole CLIP model: both towers (visual.* the image tower, the text tower's " +
      std::to_string(text_tensors) + " tensors under text.)";
  if (dropped > 0)
    note += "; " + std::to_string(dropped) +
            " build entries (input_resolution, context_length, vocab_size) dropped, as CLIP does";
  return note;
}

size_t clip_tower_only(nn::TensorMap& tensors) {
  size_t removed = 0;
  for (auto it = tensors.begin(); it != tensors.end();) {
    if (it->first.rfind(kClipTextPrefix, 0) == 0 || it->first == kClipLogitScale) {
      it = tensors.erase(it);
      ++removed;
    } else {
      ++it;
    }
  }
  return removed;
}

}  // namespace attnlab::models
