// recognise_weights: see checkpoint_recognition.h. The families' readers (their KeyRules)
// only read shapes; whatever they get wrong is caught by building the config and comparing
// every key and shape with the checkpoint, so a derived config is never used unverified.
#include "models/checkpoint_recognition.h"

#include <ATen/ATen.h>
#include <torch/nn/module.h>

#include <algorithm>
#include <mutex>

#include "core/io/text.h"
#include "core/nn/initial_values.h"
#include "models/backbone.h"
#include "models/model_family.h"
#include "models/model_registry.h"
#include "models/presets.h"

namespace attnlab::models {

ShapeMap shapes_of(const nn::TensorMap& tensors) {
  ShapeMap s;
  for (const auto& [name, t] : tensors) s[name] = t.sizes().vec();
  return s;
}

ShapeMap config_shapes(const Json& config) {
  static std::mutex mutex;
  static std::map<std::string, ShapeMap> cache;
  const std::string id = config.dump();
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(id); it != cache.end()) return it->second;
  }
  at::NoGradGuard no_grad;
  ShapeMap s;
  const nn::WeightsToBeLoaded shapes_only;  // only the shapes are read: no random values
  const auto model = make_backbone(config);
  for (const auto& p : model->named_parameters()) s[p.key()] = p.value().sizes().vec();
  for (const auto& b : model->named_buffers()) s[b.key()] = b.value().sizes().vec();
  std::lock_guard<std::mutex> lock(mutex);
  return cache.emplace(id, std::move(s)).first->second;
}

namespace {

// Missing, unexpected and mis-shaped keys of `weights` against `model`.
struct Difference {
  std::string preset;
  size_t count = 0;
  std::vector<std::string> first;
};

Difference difference(const std::string& preset, const ShapeMap& weights, const ShapeMap& model) {
  Difference d{preset, 0, {}};
  auto note = [&](const std::string& line) {
    ++d.count;
    if (d.first.size() < 3) d.first.push_back(line);
  };
  for (const auto& [key, shape] : model) {
    const auto it = weights.find(key);
    if (it == weights.end())
      note(key + " missing");
    else if (it->second != shape)
      note(key + " " + nn::shape_string(it->second) + " here, " + nn::shape_string(shape) +
           " in the preset");
  }
  for (const auto& [key, shape] : weights)
    if (!model.count(key)) note(key + " unexpected");
  return d;
}

// `buildable`: some preset is of `family` (else the key names tell a family, or nothing,
// that no backbone here builds).
[[noreturn]] void no_match(const ShapeMap& weights, const std::string& family, bool buildable,
                           const std::string& what) {
  std::vector<Difference> all;
  for (const auto& p : presets())
    all.push_back(difference(p.name, weights, config_shapes(p.config)));
  std::stable_sort(all.begin(), all.end(),
                   [](const Difference& a, const Difference& b) { return a.count < b.count; });
  std::string msg = what + ": no preset has these weights' keys and shapes";
  if (family == "unknown")
    ;                   // the key names tell no family
  else if (!buildable)  // a family the key names tell, with no backbone here
    msg += " (its keys look like a " + family + " checkpoint, a family attnlab cannot build yet)";
  else
    msg += ", and no " + family + " config built from their shapes does either";
  msg += ". Nearest presets:";
  for (size_t i = 0; i < std::min<size_t>(3, all.size()); ++i)
    msg += "\n  " + all[i].preset + ": " + std::to_string(all[i].count) + " keys differ, first " +
           text::join(all[i].first, "; ");
  msg += "\nGive --preset NAME or --config JSON to say what the model is.";
  throw RecognitionError(msg);
}

}  // namespace

Recognition recognise_weights(const ShapeMap& weights, const std::string& family,
                              const std::string& what) {
  Derivation d;
  bool derived = false;
  if (const KeyRule* rule = key_rule_named(family); rule && rule->derive) {
    try {
      d = rule->derive(weights);
      derived = true;
    } catch (const CannotDerive&) {
    } catch (const ModelError&) {
    }
  }
  // An exact preset: of the family, agreeing with every value read from the shapes.
  bool buildable = false;
  for (const auto& p : presets()) {
    if (key_family_of_arch(get_string(p.config, "arch", "model", "")) != family) continue;
    buildable = true;
    bool agrees = true;
    for (const auto& key : d.keys)
      agrees = agrees && p.config.value(key, Json()) == d.r.config[key];
    if (agrees && config_shapes(p.config) == weights) {
      Recognition r;
      r.config = p.config;
      r.preset = p.name;
      r.exact = true;
      return r;
    }
  }
  if (derived) {
    try {
      if (config_shapes(d.r.config) == weights) return d.r;
    } catch (const ModelError&) {
    }
  }
  no_match(weights, family, buildable, what);
}

}  // namespace attnlab::models
