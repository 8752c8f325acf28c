// `attnlab report --shard I/N` and its merge: what a report shard saves beside its
// per-image arrays (each model's session state and pictures, its checkpoints' series rows,
// each resolution sweep's per-size states, the joint HSIC sum of CKA between models), and
// how `attnlab merge` rebuilds the single report from the shards: the same statistics,
// figures and index.html.
#pragma once

#include <nlohmann/json.hpp>

#include <chrono>
#include <set>
#include <string>
#include <vector>

#include "app/cli/report_cka.h"
#include "app/cli/report_request.h"
#include "app/cli/shard_merge.h"

namespace attnlab::cli {

struct ReportShardState {
  nlohmann::json models = nlohmann::json::array();  // ReportModelShard::saved, per model
  std::vector<analysis::Table> series;              // this shard's checkpoints' rows
  nlohmann::json sweeps = nlohmann::json::array();  // per model: its sizes' states
  nlohmann::json cka;                               // save_joint_hsic, or null
  std::vector<std::string> errors;
};

// The series' name in the report (its folder's name, else "series").
std::string report_series_name(const std::vector<std::string>& files);
// The analyses of a series or a sweep in a report: those of that kind asked for, or all.
std::set<std::string> report_analyses_of_kind(const session::AnalysisSettings& settings,
                                              bool session::AnalysisInfo::*kind);
// A model of --models as the report resolves it (its img_size, random init, hash).
session::ModelRequest report_model_request(const ReportRequest& req, const std::string& m);

// The compensated sum (two .npy in `state_dir`), its layers, images and failures.
nlohmann::json save_joint_hsic(const JointHsic& joint, const std::string& state_dir);

// The manifest's body of a report shard.
nlohmann::json report_shard_body(const ReportShardState& saved,
                                 const session::AnalysisSettings& settings,
                                 const nlohmann::json& run,
                                 std::chrono::steady_clock::time_point started);

int merge_report(const std::vector<ShardPart>& shards, const std::string& out,
                 const nlohmann::json& record);

}  // namespace attnlab::cli
