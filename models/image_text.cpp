// See image_text.h.
#include "models/image_text.h"

#include <utility>

#include "core/nn/state_loading.h"

namespace attnlab::models {

ImageTextModel* image_text_model(Backbone& model) {
  return dynamic_cast<ImageTextModel*>(&model);
}

at::Tensor l2_normalized(const at::Tensor& rows) {
  return rows / rows.norm(2, -1, /*keepdim=*/true);
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
  std::string last_block;
  for (auto& [name, t] : image.outputs) {
    const size_t dot = name.find('.');
    const std::string kind = name.substr(0, dot), path = name.substr(dot + 1);
    out[kind + ".visual." + path] = t;
    if (kind == "out" && path.rfind("transformer.resblocks.", 0) == 0 &&
        path.find('.', 22) == std::string::npos &&
        (last_block.empty() || std::stoll(path.substr(22)) > std::stoll(last_block.substr(22))))
      last_block = path;
  }
  if (last_block.empty()) throw ModelError(model.arch() + ": the image tower recorded no block");
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
  const at::Tensor patches = pair->patch_embeddings(image.outputs.at("out." + last_block));
  out["image_patch_features"] = patches;
  const int64_t side = static_cast<int64_t>(std::llround(std::sqrt(double(patches.size(1)))));
  out["patch_text_cosine"] = at::einsum("bpe,te->btp", {l2_normalized(patches), text_n})
                                 .reshape({patches.size(0), text_n.size(0), side, side});
  for (auto& entry : out) entry.second = entry.second.detach();
  return out;
}

}  // namespace attnlab::models
