// The model-family registry (timm's one file per family and its registered presets): a
// family declares in one place everything attnlab knows about it — the archs it builds,
// its presets (a size table: name, config, where the weights come from), how its
// checkpoints are recognised (key-name rules and the shapes a config is read from), its
// evaluation preprocessing and the input sizes it runs at. Nothing outside the family
// branches on its name: presets.cpp, checkpoint_summary.cpp, checkpoint_recognition.cpp
// and checkpoint_loading.cpp ask the registry.
//
// Adding a family: its file defines `ModelFamily <family>_family()`, and
// model_registry.cpp lists it, one line (docs/ARCHITECTURE.md, "Adding a model family").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/image/preprocess.h"
#include "core/nn/state_loading.h"
#include "models/backbone.h"
#include "models/model_config.h"
#include "models/shape_reading.h"

namespace attnlab::models {

// One preset of a family; presets() adds the family's evaluation preprocessing at the
// config's img_size.
struct PresetEntry {
  std::string name;         // "deit_tiny_patch16_224"
  std::string description;  // one line: family, size, what it is
  Json config;              // what make_backbone takes
  std::string weights;      // where the official weights come from (or "none released")
};

// A rule that tells a family from a checkpoint's key names, and reads a config off its
// shapes.
struct KeyRule {
  std::string family;              // the name recognition reports: "vit", "anchor_deit", ...
  std::vector<std::string> archs;  // the config archs checkpoints of this rule build
  bool generic = false;            // tried after every specific rule (a plain skeleton that
                                   // the specific variants share)
  std::function<bool(const KeyNames&)> matches;
  // The config its shapes tell (from a preset of the family, with what was read and what
  // assumed); throws CannotDerive where a key it needs is missing or odd. Empty: the
  // checkpoint must be one of the presets exactly.
  std::function<Derivation(const ShapeMap&)> derive;
};

// A layout of checkpoints a family reads besides its own keys (transformers' ViT, DINO's
// training checkpoints, a whole CLIP release): told from the tensors, and rewritten into the
// family's own keys before recognition and the strict load (models/checkpoint_loading.cpp
// tries every family's layouts, in registry order).
struct CheckpointLayout {
  struct Rewritten {
    nn::TensorMap tensors;     // under the family's own names
    std::string architecture;  // what recognition reports; "": read off the rewritten keys
    std::string note;          // one line for the user ("" for none)
  };
  std::string name;  // CheckpointWeights::layout: "transformers", "dino_training", "clip"
  std::function<bool(const nn::TensorMap&)> matches;
  std::function<Rewritten(nn::TensorMap)> rewrite;
};

struct ModelFamily {
  std::string name;                // "vit"
  std::vector<std::string> archs;  // the "arch" values of the configs it builds
  std::shared_ptr<Backbone> (*make)(const Json& config) = nullptr;
  std::string (*mechanism)(const Json& config) = nullptr;  // the attention a config runs
  std::vector<PresetEntry> (*presets)() = nullptr;
  std::vector<KeyRule> key_rules;
  // The evaluation pipeline of a config at a square input side (its paper's resize of the
  // short side, centre crop, filter, mean/std).
  image::Preprocessing (*preprocessing)(const Json& config, int64_t side) = nullptr;
  // `config` run at height × width (throws ModelError naming the constraint broken);
  // nullptr: the family runs at its own size only.
  Json (*at_size)(Json config, int64_t height, int64_t width,
                  const std::string& interpolation) = nullptr;
  // `config` completed from a checkpoint's weights before the strict load (LITv2's Lo-Fi
  // head counts); nullptr: loaded as it is.
  Json (*fit_to_weights)(Json config, const nn::TensorMap& weights) = nullptr;
  std::vector<CheckpointLayout> layouts;  // other checkpoint layouts it reads
  // The part of a checkpoint's weights `config` builds (CLIP's image tower out of a whole
  // model), taken in place before the strict load; returns a note for the user ("" when
  // nothing was left out). nullptr: every tensor is loaded.
  std::string (*take_weights)(const Json& config, nn::TensorMap& weights) = nullptr;
};

// Every family, in registry order.
const std::vector<ModelFamily>& model_families();
// The family building `arch`, or nullptr.
const ModelFamily* family_for_arch(const std::string& arch);
// The family building the config's "arch", or nullptr.
const ModelFamily* family_for_config(const Json& config);

// The family a checkpoint's key names belong to (the first matching specific rule, else
// the first generic one), or "unknown".
std::string family_of_keys(const KeyNames& names);
// The rule reporting `family`, or nullptr.
const KeyRule* key_rule_named(const std::string& family);
// The family recognition reports for checkpoints of `arch` ("anchor_deit_distilled" →
// "anchor_deit"; an arch no rule lists is its own name).
std::string key_family_of_arch(const std::string& arch);

// The common evaluation pipeline: short side resized to floor(side / crop_pct), bicubic,
// centre crop side × side, ImageNet mean/std (timm's crop_pct: DeiT 0.9, most others 0.875).
image::Preprocessing imagenet_crop_pct(int64_t side, double crop_pct);
// The official evaluation of LITv2, RAVLT, Swin (and of a config of no family): crop_pct
// 0.875, i.e. resize 256 for 224 — a ModelFamily::preprocessing.
image::Preprocessing imagenet_crop_0875(const Json& config, int64_t side);

// The key rule of a staged layout (blocks inside stages: layers.i.blocks.j) whose keys
// contain any of `needles` (its attention's parameter names).
KeyRule staged_key_rule(const std::string& family, const std::vector<std::string>& needles,
                        std::function<Derivation(const ShapeMap&)> derive);

}  // namespace attnlab::models
