// The attention mechanism a model config runs, by name: what the zoo index, the report's
// bench and the GUI's Cost tab call a model's mechanism. Each backbone family says it of
// its own configs (ModelFamily::mechanism, model_family.h).
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attnlab::models {

// The family's answer for the config's arch (a ViT: its "attention" or its arch's
// default); "" for a config of no known arch.
std::string config_mechanism(const nlohmann::json& config);

}  // namespace attnlab::models
