// Which model a checkpoint with no config is (issue 22, "Recognition"). Its key set and
// shapes are matched against the presets: an exact match picks the preset. Otherwise a
// config is read off the shapes by its family's rule (model_family.h; e.g. a ViT's width,
// depth, classes, patch, number of tokens → image size; a staged family's layout), the
// values the weights do not hold are named with where they were taken from (e.g. a ViT's
// heads: head dim 64, as every DeiT), and the derived config must build exactly the checkpoint's
// keys and shapes. Nothing matches: RecognitionError with the three nearest presets and their first
// differing keys.
#pragma once

#include <string>

#include "core/nn/state_loading.h"
#include "models/backbone.h"
#include "models/model_config.h"
#include "models/shape_reading.h"

namespace attnlab::models {

ShapeMap shapes_of(const nn::TensorMap& tensors);
// The key → shape table a config builds (parameters and buffers). Builds the model once
// per distinct config in the process (cached; safe from any thread).
ShapeMap config_shapes(const Json& config);

struct RecognitionError : ModelError {
  using ModelError::ModelError;
};

// `family` is checkpoint_summary's guess from the key names (a family some preset has, or
// one no backbone here builds yet, or "unknown"); the family's KeyRule reads a config off
// the shapes (model_family.h). The refusal names a family it cannot build as such. `what`
// names the checkpoint in errors.
Recognition recognise_weights(const ShapeMap& weights, const std::string& family,
                              const std::string& what);

}  // namespace attnlab::models
