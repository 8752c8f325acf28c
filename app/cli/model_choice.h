// Which model a command runs, from `--model PRESET|CHECKPOINT [--preset P] [--config JSON]
// [--checkpoint FILE] [--key K] [--random-init]`: a preset name gives the config and the
// paper's preprocessing (weights from --checkpoint, or random with --random-init, which is
// said loudly); a checkpoint file gives the weights, its config from --config, --preset or
// its own safetensors metadata. Everything needed to describe the run is kept for the
// sidecar: config, preprocessing, checkpoint path and SHA-256.
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "app/cli/cli_common.h"
#include "core/image/preprocess.h"
#include "models/backbone.h"

namespace attnlab::cli {

struct ModelChoice {
  std::string model_arg;   // what --model said
  std::string preset;      // preset name when one was used
  std::string checkpoint;  // weights file ("" with --random-init)
  std::string key;         // container key
  bool random_init = false;
  nlohmann::json config;
  image::Preprocessing preprocessing;
  std::string tag;  // for file names: preset or checkpoint stem
};

// A checkpoint's model config: --config, else --preset, else its safetensors metadata;
// UsageError when none says what the model is.
nlohmann::json config_for_checkpoint(const std::string& checkpoint, const std::string& preset,
                                     const std::string& config_path);

// Takes the options above from `args`. Throws UsageError for contradictory or missing ones.
ModelChoice take_model_choice(Args& args);
// One entry of a model list (`report --models`, the GUI's open model): a checkpoint file
// (`preset` names its architecture when the file does not), or a model config .json file,
// which gives that model with untrained weights (random init; its tag ends in _random).
ModelChoice model_entry_choice(const std::string& entry, const std::string& preset = "");
// For a series: the same options, but the checkpoint comes from each file.
ModelChoice with_checkpoint(ModelChoice base, const std::string& checkpoint);

struct ReadyModel {
  std::shared_ptr<models::Backbone> model;
  nlohmann::json config;    // as fitted to the weights
  nlohmann::json describe;  // for the sidecar: arch, config, preset, checkpoint + sha256, ...
};
// Builds and loads the model (eval mode) on `device`.
ReadyModel load_chosen_model(const ModelChoice& choice, const c10::Device& device);

}  // namespace attnlab::cli
