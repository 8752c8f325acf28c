// A model that reads text as well as images (CLIP, arch "clip_full"): the text tower's
// forward, the image–text score and the per-patch embeddings that "where in the image is
// this prompt" needs. A Backbone that is one also implements this interface; the image
// analyses see only the Backbone (its image tower), so nothing image-side changes.
#pragma once

#include <ATen/ATen.h>

#include <map>
#include <string>

#include "models/backbone.h"

namespace attnlab::models {

struct TextEncoding {
  at::Tensor features;   // (B, E): the pooled row @ text_projection, before normalisation
  at::Tensor eot_index;  // (B,) int64: the pooled position, the first largest id
  // With `record`: the fixture names "out.token_embedding", "out.transformer.resblocks.<i>",
  // "out.ln_final", "text_pooled", "attn.transformer.resblocks.<last>".
  std::map<std::string, at::Tensor> outputs;
};

class ImageTextModel {
 public:
  virtual ~ImageTextModel() = default;
  // tokens (B, context_length) integer ids below vocabulary_size(); throws ModelError
  // naming what is wrong otherwise.
  virtual TextEncoding encode_text(const at::Tensor& tokens, bool record = false) = 0;
  // The 0-d learned log scale; the logits are exp(it) · cosine.
  virtual at::Tensor logit_scale() const = 0;
  // (B, g², E): each patch token of the last block's output (B, 1 + g², C), read out as
  // the class token is (CLIP: ln_post, then @ proj).
  virtual at::Tensor patch_embeddings(const at::Tensor& last_block_output) const = 0;
  virtual int64_t context_length() const = 0;
  virtual int64_t vocabulary_size() const = 0;
  // Makes the image output class scores: exp(logit_scale) · image_n · headᵀ, `head`
  // (classes, E) with L2-normalised rows (models/zero_shot_head.h); the Backbone's
  // output_kind() is then classes. An undefined tensor takes the head off again.
  virtual void set_class_head(const at::Tensor& head) = 0;
  // The head set (classes, E), undefined when none.
  virtual at::Tensor class_head() const = 0;
  // The image embedding (B, E) of a forward that recorded its outputs: its logits, or with
  // a class head, the pooled token recomputed into the embedding.
  virtual at::Tensor image_features(const ForwardResult& recorded) const = 0;
};

// The model's text side, or nullptr for an image-only model.
ImageTextModel* image_text_model(Backbone& model);

// The whole image–text forward under the reference fixtures' names (clip_full_mini): the
// image tower's recorded outputs as "out.visual.<path>" / "attn.visual.<path>",
// image_features(_normalized), the text tower's (TextEncoding::outputs, eot_index,
// text_features(_normalized)), logit_scale_exp, logits_per_image (B_i, B_t),
// logits_per_text, image_patch_features (B_i, g², E) and patch_text_cosine (B_i, B_t, g, g).
std::map<std::string, at::Tensor> run_image_text(Backbone& model, const at::Tensor& images,
                                                 const at::Tensor& tokens);

// "Where in the image is each text": for images (B, 3, H, W) and L2-normalised text
// features (K, E), each patch's embedding (patch_embeddings of the last block) against each
// text — the cosine, CLIP's readout of the class token applied to every patch (coarse:
// training aligns only the class token) — and the image–text logits exp(logit_scale) ·
// image_n · text_nᵀ.
struct PromptMaps {
  at::Tensor cosine;  // (B, K, g, g)
  at::Tensor logits;  // (B, K)
};
PromptMaps prompt_maps(Backbone& model, const at::Tensor& images, const at::Tensor& texts_n);

// Rows divided by their L2 norms, as CLIP's forward does (no epsilon: a zero row is NaN).
at::Tensor l2_normalized(const at::Tensor& rows);

}  // namespace attnlab::models
