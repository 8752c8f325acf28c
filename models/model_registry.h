// Backbones by architecture name ("arch" in a config): each family file defines
// `std::shared_ptr<Backbone> make_<family>(const Json& config)` for the arch names it
// handles, and model_registry.cpp lists the families, one line each.
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
