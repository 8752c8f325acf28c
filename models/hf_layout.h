// Hugging Face `transformers` ViT and DeiT checkpoints (a folder with config.json and
// model.safetensors or pytorch_model.bin): their keys are renamed to timm's at load
// (vit.|deit. embeddings, encoder.layer.i.{attention,intermediate,output}, layernorm,
// classifier | cls_classifier + distillation_classifier), the separate query, key and
// value projections concatenated into timm's fused qkv (q rows first, then k, then v: the
// order timm's reshape(B, N, 3, heads, d) reads), and their config.json read into ours
// (hidden_size, num_hidden_layers, num_attention_heads, intermediate_size, image_size,
// patch_size, layer_norm_eps, qkv_bias; id2label as class names).
#pragma once

#include <string>

#include "core/nn/state_loading.h"
#include "models/model_config.h"

namespace attnlab::models {

// True when the keys are a transformers ViT/DeiT state dict (vit.embeddings.* or
// deit.embeddings.*).
bool is_hf_vit_layout(const nn::TensorMap& tensors);
// The same weights under timm's keys. Throws ModelError naming what does not fit (a DeiT
// with a distillation token but one classifier; a missing projection).
nn::TensorMap hf_vit_to_timm(nn::TensorMap tensors);

// True for a transformers config.json of a ViT or DeiT ("model_type": "vit" | "deit").
bool is_hf_config(const Json& j);
// Our config for it, with "class_names" from id2label when it names every class. Throws
// ModelError for settings our ViT does not have (hidden_act other than gelu, channels).
Json config_from_hf(const Json& hf);

// The weights file of a transformers model folder (model.safetensors, else
// pytorch_model.bin); "" when `dir` holds neither.
std::string hf_folder_weights(const std::string& dir);

}  // namespace attnlab::models
