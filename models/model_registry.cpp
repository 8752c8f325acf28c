// The backbone registry: one line per family in ATTNLAB_MODEL_FAMILIES; a family handles
// the arch names it lists in `<family>_archs()` and builds them in `make_<family>()`.
#include "models/model_registry.h"
#include "models/config_mechanism.h"
#include "core/io/text.h"

// clang-format off
#define ATTNLAB_MODEL_FAMILIES(X) \
  X(vit) \
  X(litv2) \
  X(ravlt) \
  X(swin)
// clang-format on

namespace attnlab::models {

#define ATTNLAB_DECLARE(f)                                \
  std::shared_ptr<Backbone> make_##f(const Json& config); \
  std::string f##_mechanism(const Json& config);          \
  std::vector<std::string> f##_archs();
ATTNLAB_MODEL_FAMILIES(ATTNLAB_DECLARE)
#undef ATTNLAB_DECLARE

std::vector<std::string> known_archs() {
  std::vector<std::string> all;
#define ATTNLAB_ARCHS(f) \
  for (auto& a : f##_archs()) all.push_back(a);
  ATTNLAB_MODEL_FAMILIES(ATTNLAB_ARCHS)
#undef ATTNLAB_ARCHS
  return all;
}

namespace {

std::string arch_of(const Json& config) {
  return config.is_object() && config.contains("arch") && config["arch"].is_string()
             ? config["arch"].get<std::string>()
             : std::string();
}

}  // namespace

std::string config_mechanism(const Json& config) {
  const std::string arch = arch_of(config);
#define ATTNLAB_TRY(f)              \
  for (const auto& a : f##_archs()) \
    if (a == arch) return f##_mechanism(config);
  ATTNLAB_MODEL_FAMILIES(ATTNLAB_TRY)
#undef ATTNLAB_TRY
  return "";
}

std::shared_ptr<Backbone> make_backbone(const Json& config) {
  const std::string arch = arch_of(config);
  std::shared_ptr<Backbone> model;
#define ATTNLAB_TRY(f)              \
  for (const auto& a : f##_archs()) \
    if (!model && a == arch) model = make_##f(config);
  ATTNLAB_MODEL_FAMILIES(ATTNLAB_TRY)
#undef ATTNLAB_TRY
  if (model) {
    model->set_config_text(config.dump());
    return model;
  }
  throw ModelError("unknown model arch '" + arch + "' (known: " + text::join(known_archs()) + ")");
}

}  // namespace attnlab::models
