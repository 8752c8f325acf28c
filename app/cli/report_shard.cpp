// A report shard's saved parts, and the merge that draws the single report from them.
#include "app/cli/report_shard.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "app/cli/output_failure.h"
#include "app/cli/report_page.h"
#include "app/cli/shard_run.h"
#include "app/cli/size_sweep.h"
#include "app/session/checkpoint_series.h"
#include "app/session/edited_input.h"
#include "core/analysis/exact_table_json.h"
#include "core/analysis/output_folder.h"
#include "core/io/file_bytes.h"
#include "core/io/npy.h"
#include "core/io/torch_bridge.h"
#include "models/config_mechanism.h"

namespace fs = std::filesystem;

namespace attnlab::cli {
namespace {

void add_once(std::vector<std::string>& list, const std::string& item) {
  if (std::find(list.begin(), list.end(), item) == list.end()) list.push_back(item);
}

}  // namespace

std::string report_series_name(const std::vector<std::string>& files) {
  const std::string name = fs::path(files.front()).parent_path().filename().string();
  return name.empty() ? "series" : name;
}

nlohmann::json save_joint_hsic(const JointHsic& joint, const std::string& state_dir) {
  fs::create_directories(state_dir);
  return {{"files", analysis::save_compensated_sum(joint.total, state_dir, "cka_models")},
          {"layers", joint.sum.layers},
          {"images", joint.images},
          {"failed", joint.failed}};
}

nlohmann::json report_shard_body(const ReportShardState& saved,
                                 const session::AnalysisSettings& settings,
                                 const nlohmann::json& run,
                                 std::chrono::steady_clock::time_point started) {
  nlohmann::json series = nlohmann::json::array();
  for (const auto& t : saved.series) series.push_back(analysis::exact_table_json(t));
  nlohmann::json r = run;
  r["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return {{"analyses", settings.analyses}, {"run", r},
          {"models", saved.models},        {"series", series},
          {"sweeps", saved.sweeps},        {"cka", saved.cka},
          {"errors", saved.errors},        {"exit", saved.errors.empty() ? kExitOk : kExitFailure}};
}

int merge_report(const std::vector<ShardPart>& shards, const std::string& out,
                 const nlohmann::json& record) {
  const auto t0 = std::chrono::steady_clock::now();
  const nlohmann::json& first = shards.front().manifest;
  std::vector<std::string> words = first.at("options").get<std::vector<std::string>>();
  words.insert(words.end(), {"--out", out});
  Args options(words);
  ReportRequest req = take_report_request(options);
  req.settings.analyses = first.at("analyses").get<std::set<std::string>>();
  const session::AnalysisSettings& settings = req.settings;
  GlobalOptions g;
  g.device = first.value("device", "auto");
  g.dtype = first.value("dtype", "fp32");
  const runtime::ComputeTarget target = compute_target(g);
  nlohmann::json run = first.at("run");
  run.erase("seconds");
  run["merged_from"] = record;
  create_output_folder(fs::path(out) / "figures");
  const std::string stats_dir = (fs::path(out) / "stats").string();
  create_output_folder(stats_dir);
  if (!settings.edits.empty())
    io::write_file_atomic((fs::path(out) / session::kEditsFile).string(),
                          session::edits_file_text(settings.edits));
  // Every shard analysed the same models (one that failed to load in one shard only is a
  // shard to re-run).
  std::vector<std::string> tags;
  for (const auto& m : first.at("models")) tags.push_back(m.at("tag").get<std::string>());
  for (const auto& p : shards) {
    std::vector<std::string> t;
    for (const auto& m : p.manifest.at("models")) t.push_back(m.at("tag").get<std::string>());
    if (t != tags)
      throw std::runtime_error(p.dir + " analysed other models than " + shards.front().dir +
                               " (a model failed there?): re-run that shard");
  }
  ReportParts parts;
  for (const auto& p : shards)
    for (const auto& e : p.manifest.at("errors")) add_once(parts.errors, e.get<std::string>());
  for (size_t m = 0; m < tags.size(); ++m) {
    std::vector<std::pair<std::string, nlohmann::json>> model_parts;
    for (const auto& p : shards) model_parts.emplace_back(p.dir, p.manifest.at("models").at(m));
    parts.results.push_back(merge_report_model(model_parts, settings, stats_dir));
  }
  for (const auto& m : req.model_args) {  // what the cost figures count and measure
    const session::ModelRequest request = report_model_request(req, m);
    const ModelChoice c = choose_request(request);
    if (std::find(tags.begin(), tags.end(), c.tag) != tags.end())
      parts.cost_models.push_back({c.tag, request, models::config_mechanism(c.config)});
  }
  // The series: its checkpoints' rows from the shards that had some.
  std::vector<std::pair<std::string, nlohmann::json>> series_tables;
  for (const auto& p : shards)
    if (!p.manifest.at("series").empty())
      series_tables.emplace_back(p.dir, p.manifest.at("series"));
  if (!series_tables.empty()) {
    session::SeriesResults s;
    s.name = report_series_name(req.series_files);
    s.tables = concatenated_tables(series_tables);
    analysis::OutputFolder folder(stats_dir, s.name);
    for (const auto& t : s.tables) folder.write_table(t);
    parts.series = std::move(s);
  }
  // Each model's resolution sweep: per size, the shards' sessions in order.
  const size_t sweeps = first.at("sweeps").size();
  for (size_t w = 0; w < sweeps; ++w) {
    session::AnalysisSettings ss = settings;
    ss.analyses = report_analyses_of_kind(settings, &session::AnalysisInfo::over_sizes);
    const std::string tag = first.at("sweeps").at(w).at("tag").get<std::string>();
    std::vector<SweepShard> sweep_parts;
    for (const auto& p : shards) {
      const nlohmann::json& sw = p.manifest.at("sweeps").at(w);
      sweep_parts.push_back(
          {p.dir + "/" + kShardStateDir + "/" + sw.at("dir").get<std::string>(), sw.at("states")});
    }
    SizeSweep sweep = merge_sweep(ss, req.sweep_sizes, tag, sweep_parts);
    analysis::OutputFolder folder(stats_dir, tag + "_sizes");
    for (const auto& t : sweep.results.tables) folder.write_table(t);
    folder.write_table(sweep.costs);
    parts.sweeps.push_back(std::move(sweep.results));
  }
  // CKA between models: the shards' compensated sums added in order.
  if (!first.at("cka").is_null()) {
    JointHsic joint;
    for (const auto& p : shards) {
      const nlohmann::json& c = p.manifest.at("cka");
      if (c.is_null()) throw std::runtime_error(p.dir + " has no CKA between models");
      joint.total.absorb(
          analysis::load_compensated_sum(c.at("files"), p.dir + "/" + kShardStateDir));
      joint.images += c.at("images").get<int64_t>();
      for (const auto& f : c.at("failed")) joint.failed.push_back(f.get<std::string>());
      joint.sum.layers = c.at("layers").get<std::vector<std::vector<int64_t>>>();
    }
    joint.sum.hsic = joint.total.value();
    parts.cka = cross_model_cka_of(tags, joint);
    analysis::OutputFolder folder(stats_dir, "models");
    folder.write_table(parts.cka->table);
  }
  return finish_report(req, parts, target, run, stats_dir, t0);
}

}  // namespace attnlab::cli
