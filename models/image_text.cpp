// See image_text.h.
#include "models/image_text.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/nn/state_loading.h"

namespace attnlab::models {

ImageTextModel* image_text_model(Backbone& model) {
  return dynamic_cast<ImageTextModel*>(&model);
}

at::Tensor l2_normalized(const at::Tensor& rows) {
  return rows / rows.norm(2, -1, /*keepdim=*/true);
}

namespace {

// The recorded output of the image tower's last block: "transformer.resblocks.<max>".
std::string last_block(const std::map<std::string, at::Tensor>& outputs, const std::string& who) {
  const std::string stem = "out.transformer.resblocks.";
  int64_t last = -1;
  for (const auto& entry : outputs) {
    const std::string& name = entry.first;
    if (name.rfind(stem, 0) != 0) continue;
    const std::string index = name.substr(stem.size());
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
    last = std::max<int64_t>(last, std::stoll(index));
  }
  if (last < 0) throw ModelError(who + ": the image tower recorded no block");
  return stem + std::to_string(last);
}

at::Tensor cosine_maps(const at::Tensor& patches, const at::Tensor& texts_n) {
  const int64_t side = static_cast<int64_t>(std::llround(std::sqrt(double(patches.size(1)))));
  return at::einsum("bpe,te->btp", {l2_normalized(patches), texts_n.to(patches.scalar_type())})
      .reshape({patches.size(0), texts_n.size(0), side, side});
}

}  // namespace

PromptMaps prompt_maps(Backbone& model, const at::Tensor& images, const at::Tensor& texts_n) {
  ImageTextModel* pair = image_text_model(model);
  if (!pair)
    throw ModelError(model.arch() + " reads images only: prompts need a whole CLIP (clip_full)");
  ForwardOptions options;
  options.record_outputs = true;
  options.record_attention_outputs = false;
  const ForwardResult image = model.run(images, options);
  const at::Tensor features = l2_normalized(pair->image_features(image));
  const at::Tensor texts = texts_n.to(features.device(), features.scalar_type());
  PromptMaps m;
  m.cosine =
      cosine_maps(pair->patch_embeddings(image.outputs.at(last_block(image.outputs, model.arch()))),
                  texts)
          .detach();
  m.logits =
      (pair->logit_scale().exp().to(features.scalar_type()) * at::matmul(features, texts.t()))
          .detach();
  return m;
}

std::map<std::string, at::Tensor> run_image_text(Backbone& model, const at::Tensor& images,
                                                 const at::Tensor& tokens) {
  ImageTextModel* pair = image_text_model(model);
  if (!pair)
    throw ModelError(model.arch() + " reads images only: text needs a whole CLIP (clip_full)");
  std::map<std::string, at::Tensor> out;
  ForwardOptions options;
  options.record_outputs = true;
  ForwardResult image = model.run(images, options);
  // The image tower's names behind "visual.", as the whole model's state dict has them.
  for (auto& [name, t] : image.outputs) {
    const size_t dot = name.find('.');
    out[name.substr(0, dot) + ".visual." + name.substr(dot + 1)] = t;
  }
  TextEncoding text = pair->encode_text(tokens, /*record=*/true);
  for (auto& [name, t] : text.outputs) out[name] = t;
  const at::Tensor image_features = pair->image_features(image);
  const at::Tensor image_n = l2_normalized(image_features), text_n = l2_normalized(text.features);
  const at::Tensor scale = pair->logit_scale().exp();
  out["image_features"] = image_features;
  out["image_features_normalized"] = image_n;
  out["text_features"] = text.features;
  out["text_features_normalized"] = text_n;
  out["eot_index"] = text.eot_index;
  out["logit_scale_exp"] = scale.detach();
  const at::Tensor cosine = at::matmul(image_n, text_n.t());
  out["logits_per_image"] = scale * cosine;
  out["logits_per_text"] = out["logits_per_image"].t();
  const at::Tensor patches =
      pair->patch_embeddings(image.outputs.at(last_block(image.outputs, model.arch())));
  out["image_patch_features"] = patches;
  out["patch_text_cosine"] = cosine_maps(patches, text_n);
  for (auto& entry : out) entry.second = entry.second.detach();
  return out;
}

}  // namespace attnlab::models
