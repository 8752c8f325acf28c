// CLIP's text tower (openai/CLIP clip/model.py CLIP.encode_text): token_embedding[ids] +
// positional_embedding → transformer.resblocks.i, the image tower's pre-LN block with a
// causal mask (query i sees keys 0..i) → ln_final on every position → the row at the first
// largest id (the end-of-text token) @ text_projection. Its parameters are the release's
// top-level text keys; in a clip_full model they sit under "text." (models/clip_full.h).
#pragma once

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <memory>
#include <string>
#include <vector>

#include "models/image_text.h"
#include "models/norm_layers.h"

namespace attnlab::models {

struct ClipTextSpec {
  int64_t context = 77, vocabulary = 49408, width = 0, layers = 0, heads = 0, embed = 0;
  double ln_eps = 1e-5;
};
// Each size at least 1, the heads dividing the width; `who` names the config.
void check_clip_text_spec(const ClipTextSpec& s, const std::string& who);

class ClipTextTower : public torch::nn::Module {
 public:
  explicit ClipTextTower(const ClipTextSpec& spec);
  const ClipTextSpec& spec() const { return spec_; }
  // tokens (B, context) of ids in [0, vocabulary): checked, then encoded.
  TextEncoding encode(const at::Tensor& tokens, bool record) const;

 private:
  class Block;
  ClipTextSpec spec_;
  at::Tensor positional_embedding_, text_projection_, token_embedding_;
  std::shared_ptr<LayerNormLayer> ln_final_;
  std::vector<std::shared_ptr<Block>> blocks_;
};

}  // namespace attnlab::models
