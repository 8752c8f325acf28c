// What the model benchmarks share: a preset built with seeded random weights, in eval mode
// (no checkpoints are downloaded). The forward's time does not depend on the weights'
// values; the rank analysis's does (nearly rank-one heads take SVDs: analysis_bench.cpp).
#pragma once

#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "models/model_registry.h"
#include "models/presets.h"

namespace attnlab::bench {

inline std::shared_ptr<models::Backbone> preset_model(const std::string& preset) {
  at::manual_seed(0);
  auto m = models::make_backbone(models::find_preset(preset).config);
  m->eval();
  return m;
}

}  // namespace attnlab::bench
