// Checkpoints of a training series: the step each one records, for ordering and labels
// (the CLI's analyze-series and report, the GUI's series view).
#pragma once

#include <nlohmann/json.hpp>

#include <string>

namespace attnlab::session {

// The step a checkpoint's safetensors metadata records (models::metadata_step), or null
// (not a safetensors file, no step recorded, or metadata that cannot be read: the loader
// reports the file itself).
nlohmann::json checkpoint_step(const std::string& path);

}  // namespace attnlab::session
