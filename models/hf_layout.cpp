// Hugging Face ViT / DeiT → timm layout; see hf_layout.h.
#include "models/hf_layout.h"

#include <ATen/ATen.h>

#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>

#include "models/backbone.h"

namespace attnlab::models {
namespace {

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

// The transformers prefix of the backbone ("vit." or "deit."), "" when neither.
std::string backbone_prefix(const nn::TensorMap& t) {
  for (const char* p : {"vit.", "deit."})
    if (t.count(std::string(p) + "embeddings.cls_token")) return p;
  return "";
}

// Per-block names, transformers → timm (after "encoder.layer.i." → "blocks.i.").
const std::vector<std::pair<std::string, std::string>>& block_renames() {
  static const std::vector<std::pair<std::string, std::string>> r = {
      {"layernorm_before.", "norm1."},
      {"layernorm_after.", "norm2."},
      {"attention.output.dense.", "attn.proj."},
      {"intermediate.dense.", "mlp.fc1."},
      {"output.dense.", "mlp.fc2."},
  };
  return r;
}

}  // namespace

bool is_hf_vit_layout(const nn::TensorMap& tensors) {
  return !backbone_prefix(tensors).empty();
}

nn::TensorMap hf_vit_to_timm(nn::TensorMap t) {
  const std::string b = backbone_prefix(t);
  if (b.empty()) throw ModelError("not a transformers ViT/DeiT state dict");
  nn::TensorMap out;
  std::map<std::string, std::array<at::Tensor, 3>> qkv;  // "blocks.i.attn.qkv.<w|b>"
  const std::string layer = b + "encoder.layer.";
  const std::map<std::string, std::string> top = {
      {b + "embeddings.cls_token", "cls_token"},
      {b + "embeddings.distillation_token", "dist_token"},
      {b + "embeddings.position_embeddings", "pos_embed"},
      {b + "embeddings.patch_embeddings.projection.weight", "patch_embed.proj.weight"},
      {b + "embeddings.patch_embeddings.projection.bias", "patch_embed.proj.bias"},
      {b + "layernorm.weight", "norm.weight"},
      {b + "layernorm.bias", "norm.bias"},
      {"classifier.weight", "head.weight"},
      {"classifier.bias", "head.bias"},
      {"cls_classifier.weight", "head.weight"},
      {"cls_classifier.bias", "head.bias"},
      {"distillation_classifier.weight", "head_dist.weight"},
      {"distillation_classifier.bias", "head_dist.bias"},
  };
  for (auto& [name, tensor] : t) {
    if (auto it = top.find(name); it != top.end()) {
      out[it->second] = tensor;
    } else if (starts_with(name, layer)) {
      const size_t dot = name.find('.', layer.size());
      const std::string block = "blocks." + name.substr(layer.size(), dot - layer.size()) + ".";
      const std::string rest = name.substr(dot + 1);
      const char* parts[3] = {"attention.attention.query.", "attention.attention.key.",
                              "attention.attention.value."};
      bool done = false;
      for (int i = 0; i < 3 && !done; ++i)
        if (starts_with(rest, parts[i])) {
          qkv[block + "attn.qkv." + rest.substr(std::strlen(parts[i]))][i] = tensor;
          done = true;
        }
      for (const auto& [from, to] : block_renames())
        if (!done && starts_with(rest, from)) {
          out[block + to + rest.substr(from.size())] = tensor;
          done = true;
        }
      if (!done) out[name] = tensor;                 // left as it is: the strict load names it
    } else if (!starts_with(name, b + "pooler.")) {  // ViTModel's pooler: unused by timm
      out[name] = tensor;
    }
  }
  for (auto& [name, parts] : qkv) {
    for (const auto& p : parts)
      if (!p.defined())
        throw ModelError("transformers checkpoint: " + name +
                         " lacks one of the query, key and value projections");
    out[name] = at::cat({parts[0], parts[1], parts[2]}, 0);
  }
  if (out.count("dist_token") && !out.count("head_dist.weight"))
    throw ModelError(
        "transformers DeiTForImageClassification (a distillation token but one classifier on "
        "the cls token) has no timm equivalent; attnlab reads ViTForImageClassification and "
        "DeiTForImageClassificationWithTeacher checkpoints");
  return out;
}

bool is_hf_config(const Json& j) {
  return j.is_object() && j.contains("model_type") && j["model_type"].is_string() &&
         (j["model_type"] == "vit" || j["model_type"] == "deit");
}

Json config_from_hf(const Json& hf) {
  const std::string family = "transformers " + hf.value("model_type", std::string("vit"));
  const std::string act = get_string(hf, "hidden_act", family, "gelu");
  if (act != "gelu")
    throw ModelError(family + " config: hidden_act '" + act +
                     "' (attnlab's ViT uses the exact erf GELU, 'gelu')");
  if (get_int(hf, "num_channels", family, 3) != 3)
    throw ModelError(family + " config: num_channels must be 3");
  const int64_t dim = get_int(hf, "hidden_size", family, 768);
  Json c = {{"arch", "vit"},
            {"embed_dim", dim},
            {"depth", get_int(hf, "num_hidden_layers", family, 12)},
            {"num_heads", get_int(hf, "num_attention_heads", family, 12)},
            {"mlp_ratio", static_cast<double>(get_int(hf, "intermediate_size", family, 4 * dim)) /
                              static_cast<double>(dim)},
            {"img_size", get_int(hf, "image_size", family, 224)},
            {"patch_size", get_int(hf, "patch_size", family, 16)},
            {"ln_eps", get_real(hf, "layer_norm_eps", family, 1e-12)},
            {"qkv_bias", get_bool(hf, "qkv_bias", family, true)},
            {"class_token", true}};
  bool teacher = false;
  if (hf.contains("architectures") && hf["architectures"].is_array())
    for (const auto& a : hf["architectures"])
      teacher = teacher || (a.is_string() && a == "DeiTForImageClassificationWithTeacher");
  if (teacher) c["distilled"] = true;
  if (hf.contains("id2label") && hf["id2label"].is_object()) {
    const Json& labels = hf["id2label"];
    std::vector<std::string> names(labels.size());
    bool complete = true;
    for (const auto& [key, value] : labels.items()) {
      char* end = nullptr;
      const long i = std::strtol(key.c_str(), &end, 10);
      if (*end != '\0' || i < 0 || static_cast<size_t>(i) >= names.size() || !value.is_string())
        complete = false;
      else
        names[static_cast<size_t>(i)] = value.get<std::string>();
    }
    if (complete) {
      c["num_classes"] = static_cast<int64_t>(names.size());
      c["class_names"] = names;
    }
  }
  if (hf.contains("num_labels")) c["num_classes"] = get_int(hf, "num_labels", family);
  return c;
}

std::string hf_folder_weights(const std::string& dir) {
  namespace fs = std::filesystem;
  for (const char* name : {"model.safetensors", "pytorch_model.bin"}) {
    const fs::path p = fs::path(dir) / name;
    if (fs::is_regular_file(p)) return p.string();
  }
  return "";
}

}  // namespace attnlab::models
