// Which model a checkpoint with no config is (issue 22, "Recognition"). Its key set and
// shapes are matched against the presets: an exact match picks the preset. Otherwise a
// config is read off the shapes of its family (ViT/DeiT and its distilled, anchor and
// castling variants, LITv2, RAVLT: width, depth, classes, patch, number of tokens → image
// size, stage layout), the values the weights do not hold are named with where they were
// taken from (e.g. a ViT's heads: head dim 64, as every DeiT), and the derived config must
// build exactly the checkpoint's keys and shapes. Nothing matches: RecognitionError with
// the three nearest presets and their first differing keys.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/nn/state_loading.h"
#include "models/backbone.h"
#include "models/model_config.h"

namespace attnlab::models {

using ShapeMap = std::map<std::string, std::vector<int64_t>>;

ShapeMap shapes_of(const nn::TensorMap& tensors);
// The key → shape table a config builds (parameters and buffers). Builds the model once
// per distinct config in the process (cached; safe from any thread).
ShapeMap config_shapes(const Json& config);

struct Recognition {
  Json config;
  std::string preset;  // the exact match, or the preset the derived config started from
  bool exact = false;  // the weights are `preset`'s layout exactly
  std::vector<std::string> derived;  // "embed_dim 256 (cls_token)", ...
  std::vector<std::string> assumed;  // "num_heads 4: not in the weights; head dim 64 as DeiT"
  // "recognised as deit_small_patch16_224", or for a derived config "recognised as a vit
  // (deit_small_patch16_224's family): embed_dim 256, ...; assumed: num_heads 4 (...)".
  std::string summary() const;
};

struct RecognitionError : ModelError {
  using ModelError::ModelError;
};

// `family` is checkpoint_summary's guess from the key names (a family some preset has, or
// one no backbone here builds yet, or "unknown"); the refusal names a family it cannot
// build as such. `what` names the checkpoint in errors.
Recognition recognise_weights(const ShapeMap& weights, const std::string& family,
                              const std::string& what);

}  // namespace attnlab::models
