// What a model family's recognition rules read: a checkpoint's key names (to say which
// family it is) and its key → shape table (to read a config off it). The rules themselves
// live with each family (model_family.h); checkpoint_summary.cpp and
// checkpoint_recognition.cpp run them. Nothing here builds a model.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "models/model_config.h"

namespace attnlab::models {

using ShapeMap = std::map<std::string, std::vector<int64_t>>;
using KeyNames = std::vector<std::string>;

bool any_key_contains(const KeyNames& names, const std::string& needle);
bool any_key_starts_with(const KeyNames& names, const std::string& prefix);

// Thrown by a family's reader when a key it needs is missing or has an odd shape: the
// checkpoint is then matched against the presets alone.
struct CannotDerive {};

// The shape of `key`, which must have `dims` dimensions (else CannotDerive).
const std::vector<int64_t>& need_shape(const ShapeMap& w, const std::string& key, size_t dims);
// The leading size of a weight of any rank (a linear's out features, a conv's out channels).
int64_t leading_size(const ShapeMap& w, const std::string& key);
// How many consecutive indices i have keys starting with prefix + "i.".
int64_t count_indices(const ShapeMap& w, const std::string& prefix);
// The integer side of a square count (a token grid), or CannotDerive.
int64_t square_side(int64_t square);

// Which model a checkpoint with no config is, as far as its shapes tell: the config read
// so far (starting from a preset of the family), what was read and from where, and what
// was assumed because the weights do not hold it.
struct Recognition {
  Json config;
  std::string preset;  // the exact match, or the preset the derived config started from
  bool exact = false;  // the weights are `preset`'s layout exactly
  std::vector<std::string> derived;  // "embed_dim 256 (cls_token)", ...
  std::vector<std::string> assumed;  // "num_heads 4: not in the weights; head dim 64 as DeiT"
  // "recognised as deit_small_patch16_224", or for a derived config "recognised as a vit
  // like deit_small_patch16_224, read from its shapes: embed_dim 256, ...; not in the
  // weights: num_heads 4 (...)".
  std::string summary() const;
};

struct Derivation {
  Recognition r;
  std::vector<std::string> keys;  // config keys read from the shapes (compared to presets)

  // Starts from the config of preset `preset` (which must exist).
  static Derivation from_preset(const std::string& preset);
  void set(const std::string& key, const Json& value, const std::string& from);
  void assume(const std::string& key, const Json& value, const std::string& why);
};

}  // namespace attnlab::models
