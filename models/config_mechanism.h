// The attention mechanism a model config runs, by name: what the zoo index, the report's
// bench and the GUI's Cost tab call a model's mechanism.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace attnlab::models {

// Its "attention" (a ViT with any registered mechanism), else the family's own (LITv2:
// hilo, RAVLT: rala, Swin: swin, a ViT without one: softmax); "" when nothing says.
std::string config_mechanism(const nlohmann::json& config);

}  // namespace attnlab::models
