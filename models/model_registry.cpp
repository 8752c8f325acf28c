// The model-family registry: one line per family in ATTNLAB_MODEL_FAMILIES; each family's
// file defines `ModelFamily <family>_family()` (model_family.h). Everything that needs to
// know about families (make_backbone, the presets, recognition, preprocessing, sizes)
// reads this list.
#include "models/model_registry.h"

#include <utility>

#include "core/io/text.h"
#include "models/config_mechanism.h"
#include "models/model_family.h"

// clang-format off
#define ATTNLAB_MODEL_FAMILIES(X) \
  X(vit) \
  X(litv2) \
  X(ravlt) \
  X(swin) \
  X(clip)
// clang-format on

namespace attnlab::models {

#define ATTNLAB_DECLARE(f) ModelFamily f##_family();
ATTNLAB_MODEL_FAMILIES(ATTNLAB_DECLARE)
#undef ATTNLAB_DECLARE

const std::vector<ModelFamily>& model_families() {
#define ATTNLAB_LIST(f) f##_family(),
  static const std::vector<ModelFamily> all = {ATTNLAB_MODEL_FAMILIES(ATTNLAB_LIST)};
#undef ATTNLAB_LIST
  return all;
}

const ModelFamily* family_for_arch(const std::string& arch) {
  for (const auto& f : model_families())
    for (const auto& a : f.archs)
      if (a == arch) return &f;
  return nullptr;
}

namespace {

std::string registry_arch_of(const Json& config) {
  return config.is_object() && config.contains("arch") && config["arch"].is_string()
             ? config["arch"].get<std::string>()
             : std::string();
}

}  // namespace

const ModelFamily* family_for_config(const Json& config) {
  return family_for_arch(registry_arch_of(config));
}

std::vector<std::string> known_archs() {
  std::vector<std::string> all;
  for (const auto& f : model_families()) all.insert(all.end(), f.archs.begin(), f.archs.end());
  return all;
}

std::string config_mechanism(const Json& config) {
  const ModelFamily* family = family_for_config(config);
  return family && family->mechanism ? family->mechanism(config) : "";
}

std::shared_ptr<Backbone> make_backbone(const Json& config) {
  const std::string arch = registry_arch_of(config);
  const ModelFamily* family = family_for_arch(arch);
  if (!family)
    throw ModelError("unknown model arch '" + arch + "' (known: " + text::join(known_archs()) +
                     ")");
  // Token merging (models/token_merging.h) is built into the ViT family only: another
  // family would ignore the key and run unmerged under a config that says otherwise.
  if (config.contains("tome_r") && family->name != "vit")
    throw ModelError("'tome_r' (token merging) is built for the vit family, not " + family->name +
                     " (arch '" + arch + "')");
  std::shared_ptr<Backbone> model = family->make(config);
  model->set_config_text(config.dump());
  return model;
}

std::string family_of_keys(const KeyNames& names) {
  for (const bool generic : {false, true})
    for (const auto& f : model_families())
      for (const auto& rule : f.key_rules)
        if (rule.generic == generic && rule.matches(names)) return rule.family;
  return "unknown";
}

const KeyRule* key_rule_named(const std::string& family) {
  for (const auto& f : model_families())
    for (const auto& rule : f.key_rules)
      if (rule.family == family) return &rule;
  return nullptr;
}

std::string key_family_of_arch(const std::string& arch) {
  for (const auto& f : model_families())
    for (const auto& rule : f.key_rules)
      for (const auto& a : rule.archs)
        if (a == arch) return rule.family;
  return arch;
}

image::Preprocessing imagenet_crop_0875(const Json&, int64_t side) {
  return imagenet_crop_pct(side, 0.875);
}

KeyRule staged_key_rule(const std::string& family, const std::vector<std::string>& needles,
                        std::function<Derivation(const ShapeMap&)> derive) {
  KeyRule rule;
  rule.family = family;
  rule.archs = {family};
  rule.matches = [needles](const KeyNames& k) {
    if (!any_key_starts_with(k, "layers.")) return false;
    for (const auto& needle : needles)
      if (any_key_contains(k, needle)) return true;
    return false;
  };
  rule.derive = std::move(derive);
  return rule;
}

image::Preprocessing imagenet_crop_pct(int64_t side, double crop_pct) {
  // timm: int(math.floor(img_size / crop_pct)); 0.875 = 7/8 is exact, so 224 → 256.
  return image::imagenet_eval(static_cast<int>(static_cast<double>(side) / crop_pct),
                              static_cast<int>(side));
}

}  // namespace attnlab::models
