// The names of every preset (models/presets.h), in registry order: the parameter list of the
// tests that run each preset (meta device, CUDA).
#pragma once

#include <string>
#include <vector>

#include "models/presets.h"

namespace attnlab::testing {

inline std::vector<std::string> preset_names() {
  std::vector<std::string> out;
  for (const auto& p : models::presets()) out.push_back(p.name);
  return out;
}

}  // namespace attnlab::testing
