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

// A shard's part of one model (report --shard): its per-image arrays go to `stats_dir` as
// usual; the session's state (AnalysisSession::save_state) and the images' pictures go to
// `state_dir`, and `saved` says what a merge reads back. No table or sidecar is written.
struct ReportModelShard {
  std::string state_dir;
  nlohmann::json saved;
};

// Loads the model, analyses the images and writes the statistics (and arrays) of
// `analyze` into `stats_dir`. Throws when the model cannot be loaded or no image works.
ModelResults run_report_model(const ModelChoice& choice, const std::vector<ImageInput>& images,
                              const session::AnalysisSettings& settings,
                              const runtime::ComputeTarget& target, const std::string& stats_dir,
                              const nlohmann::json& run, ReportModelShard* shard = nullptr);

// The model's results from its shards' parts (folder, ReportModelShard::saved), in the
// list's order: the states absorbed, the arrays read back and adopted into `stats_dir`,
// the pictures; the statistics and sidecar written as run_report_model writes them.
ModelResults merge_report_model(const std::vector<std::pair<std::string, nlohmann::json>>& parts,
                                const session::AnalysisSettings& settings,
                                const std::string& stats_dir);

}  // namespace attnlab::cli
