// Backbones by architecture name ("arch" in a config), from the model-family registry
// (model_family.h: each family's file declares its archs, presets, recognition rules,
// preprocessing and sizes; model_registry.cpp lists the families, one line each).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "models/backbone.h"
#include "models/model_config.h"

namespace attnlab::models {

// Throws ModelError naming the known archs for an unknown one.
std::shared_ptr<Backbone> make_backbone(const Json& config);
std::vector<std::string> known_archs();

}  // namespace attnlab::models
