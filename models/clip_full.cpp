// See clip_full.h.
#include "models/clip_full.h"

#include <cmath>
#include <utility>

#include "core/nn/state_loading.h"
#include "models/clip_text.h"
#include "models/clip_visual.h"
#include "models/image_text.h"

namespace attnlab::models {

const char* const kClipFullArch = "clip_full";

namespace {

class ClipFull : public ClipVisual, public ImageTextModel {
 public:
  ClipFull(const ClipVisualSpec& visual, const ClipTextSpec& text)
      : ClipVisual(visual, kClipFullArch) {
    text_ = register_module("text", std::make_shared<ClipTextTower>(text));
    logit_scale_ = register_parameter("logit_scale", at::full({}, std::log(1.0 / 0.07)));
  }
  TextEncoding encode_text(const at::Tensor& tokens, bool record) override {
    return text_->encode(tokens, record);
  }
  at::Tensor logit_scale() const override { return logit_scale_; }
  at::Tensor patch_embeddings(const at::Tensor& last_block_output) const override {
    const int64_t patches = visual_spec().grid() * visual_spec().grid();
    if (last_block_output.dim() != 3 || last_block_output.size(1) != patches + 1)
      throw ModelError(std::string(kClipFullArch) + ": the last block's output is (B, " +
                       std::to_string(patches + 1) + ", C), got " +
                       nn::shape_string(last_block_output.sizes()));
    return project_tokens(last_block_output.narrow(1, 1, patches));
  }
  int64_t context_length() const override { return text_->spec().context; }
  int64_t vocabulary_size() const override { return text_->spec().vocabulary; }
  void set_class_head(const at::Tensor& head) override {
    if (head.defined() &&
        (head.dim() != 2 || head.size(1) != visual_spec().output_dim || head.size(0) < 1))
      throw ModelError(std::string(kClipFullArch) + ": a class head is (classes, " +
                       std::to_string(visual_spec().output_dim) + "), got " +
                       nn::shape_string(head.sizes()));
    // Kept beside the module tree, not in it: the weights, their loading and the analyses
    // that walk the modules stay the release's.
    head_ = head.defined() ? head.detach().to(logit_scale_.device()) : at::Tensor();
  }
  at::Tensor class_head() const override { return head_; }
  at::Tensor image_features(const ForwardResult& recorded) const override {
    if (!head_.defined()) return recorded.logits;
    const auto it = recorded.outputs.find("out.ln_post");
    if (it == recorded.outputs.end())
      throw ModelError(std::string(kClipFullArch) + ": the image features need a recorded forward");
    return project_pooled(it->second);
  }
  OutputKind output_kind() const override {
    return head_.defined() ? OutputKind::classes : OutputKind::embedding;
  }
  // The class token read out as the forward does, then scored by the head: the logit lens
  // and the linear probes of a zero-shot CLIP.
  at::Tensor readout_logits(const at::Tensor& tokens) const override {
    if (!head_.defined()) return ClipVisual::readout_logits(tokens);
    return class_scores(project_tokens(readout_features(tokens).unsqueeze(1)).squeeze(1));
  }

 protected:
  ForwardResult forward_images(const at::Tensor& images, const ForwardOptions& options) override {
    ForwardResult r = ClipVisual::forward_images(images, options);
    if (head_.defined()) r.logits = class_scores(r.logits);
    return r;
  }

 private:
  at::Tensor class_scores(const at::Tensor& embedding) const {
    const at::Tensor head = head_.to(embedding.device(), embedding.scalar_type());
    return logit_scale_.exp().to(embedding.scalar_type()) *
           at::matmul(l2_normalized(embedding), head.t());
  }
  at::Tensor head_;
  std::shared_ptr<ClipTextTower> text_;
  at::Tensor logit_scale_;
};

}  // namespace

std::shared_ptr<Backbone> make_clip_full(const Json& c) {
  const std::string who = std::string(kClipFullArch) + " config";
  if (!c.is_object()) throw ModelError(who + " must be a JSON object");
  ClipVisualSpec v;
  v.resolution = get_int(c, "image_resolution", kClipFullArch, 224);
  v.patch = get_int(c, "vision_patch_size", kClipFullArch);
  v.width = get_int(c, "vision_width", kClipFullArch);
  v.layers = get_int(c, "vision_layers", kClipFullArch);
  // CLIP.__init__ fixes the image tower's heads at width // 64; a config may say otherwise.
  v.heads = get_int(c, "vision_heads", kClipFullArch, std::max<int64_t>(1, v.width / 64));
  v.output_dim = get_int(c, "embed_dim", kClipFullArch);
  v.ln_eps = get_real(c, "ln_eps", kClipFullArch, 1e-5);
  check_clip_visual_spec(v, who);
  ClipTextSpec t;
  t.context = get_int(c, "context_length", kClipFullArch, 77);
  t.vocabulary = get_int(c, "vocab_size", kClipFullArch, 49408);
  t.width = get_int(c, "transformer_width", kClipFullArch);
  t.layers = get_int(c, "transformer_layers", kClipFullArch);
  t.heads = get_int(c, "transformer_heads", kClipFullArch, std::max<int64_t>(1, t.width / 64));
  t.embed = v.output_dim;
  t.ln_eps = v.ln_eps;
  check_clip_text_spec(t, who);
  return std::make_shared<ClipFull>(v, t);
}

Json clip_full_b16_config() {
  return {{"arch", kClipFullArch},   {"embed_dim", 512},
          {"image_resolution", 224}, {"vision_layers", 12},
          {"vision_width", 768},     {"vision_patch_size", 16},
          {"vision_heads", 12},      {"context_length", 77},
          {"vocab_size", 49408},     {"transformer_width", 512},
          {"transformer_heads", 8},  {"transformer_layers", 12},
          {"ln_eps", 1e-5}};
}

}  // namespace attnlab::models
