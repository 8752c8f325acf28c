// DINO's and DINOv2's training checkpoints open as the backbone they trained. DINO saves
// {'student', 'teacher', 'optimizer', 'epoch', 'args', ...}, each network a MultiCropWrapper
// whose ViT sits under backbone.* beside its projection head (head.*); DINOv2 saves
// {'teacher': ...} for evaluation (backbone.*, dino_head.*, ibot_head.*) and whole training
// states under 'model' (student.backbone.*, teacher.backbone.*, ...), its blocks often in
// chunks (blocks.<chunk>.<index>: a chunk keeps its blocks' global indices). Both projects'
// evaluations take the teacher's backbone and drop the rest; so does this, saying so.
#pragma once

#include <cstddef>
#include <string>

#include "core/nn/state_loading.h"

namespace attnlab::models {

// True when the keys are a DINO / DINOv2 training network: backbone.cls_token, or
// teacher.backbone.cls_token / student.backbone.cls_token, among them.
bool is_dino_training_layout(const nn::TensorMap& tensors);

struct DinoBackbone {
  nn::TensorMap tensors;     // the backbone's tensors under the release's own names
  std::string taken;         // the prefix they were under ("teacher.backbone.", "backbone.")
  size_t left_out = 0;       // heads' and the other network's tensors
  bool unchunked = false;    // blocks.<chunk>.<index> were renamed blocks.<index>
  std::string note() const;  // "a DINO training checkpoint: its teacher's backbone ..."
};
DinoBackbone dino_training_backbone(nn::TensorMap tensors);

}  // namespace attnlab::models
