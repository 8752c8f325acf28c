// One model's part of `attnlab report`: analyse the images and keep every statistics table,
// every array and the picture each image became after preprocessing (session::ModelResults,
// what the figures read); the statistics files of `analyze` are written as the run goes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "app/cli/analyze_common.h"
#include "app/session/results.h"

namespace attnlab::cli {

using session::ModelResults;

// Loads the model, analyses the images and writes the statistics (and arrays) of
// `analyze` into `stats_dir`. Throws when the model cannot be loaded or no image works.
ModelResults run_report_model(const ModelChoice& choice, const std::vector<ImageInput>& images,
                              const session::AnalysisSettings& settings,
                              const runtime::ComputeTarget& target, const std::string& stats_dir,
                              const nlohmann::json& run);

}  // namespace attnlab::cli
