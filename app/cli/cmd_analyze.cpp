// `attnlab analyze` and `attnlab analyze-series`: run a model over images and write every
// requested analysis into a self-describing output folder (core/analysis/output_folder.h).
//   analyze --model PRESET|CHECKPOINT [model options] --images FILES|DIR --out DIR
//           [--analyses LIST] [--query y,x] [--layers LIST] [analysis switches]
//   analyze-series --checkpoints FILES... [model options] --images ... --out DIR [...]
// One bad image is reported and skipped; the rest are still analysed and written (exit 1).
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>

#include "app/cli/analyze_common.h"
#include "app/cli/shard_run.h"
#include "app/session/edited_input.h"
#include "core/analysis/background_writer.h"
#include "core/analysis/exact_table_json.h"
#include "core/analysis/output_folder.h"
#include "core/io/tensor_file.h"
#include "core/runtime/precision.h"

namespace attnlab::cli {
namespace {

nlohmann::json images_json(const std::vector<ImageInput>& images,
                           const std::vector<std::string>& failed) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& im : images) {
    const bool bad = std::find(failed.begin(), failed.end(), im.path) != failed.end();
    j.push_back({{"path", std::filesystem::absolute(im.path).string()},
                 {"tag", im.tag},
                 {"status", bad ? "failed" : "analysed"}});
  }
  return j;
}

}  // namespace

std::string write_analyze_results(analysis::OutputFolder& folder,
                                  const session::AnalysisSession& session,
                                  const session::AnalysisSettings& settings,
                                  nlohmann::json sidecar) {
  for (const auto& t : session.tables()) folder.write_table(t);
  for (const auto& a : session.arrays()) folder.write_array(a);
  session::write_edits_file(folder, settings.edits);
  sidecar["layers"] = session.layers_json();
  sidecar["warnings"] = session.warnings();
  sidecar["skipped"] = session.skipped();
  return folder.write_sidecar(std::move(sidecar));
}

void restrict_to_shardable(session::AnalysisSettings& settings, bool named) {
  const auto whole = session::AnalysisSession::unshardable(settings.analyses);
  for (const auto& name : whole) {
    if (named)
      throw UsageError(name +
                       " fits one result on every image together and cannot be split into "
                       "shards: run it without --shard, or leave it out of --analyses");
    std::fprintf(stderr,
                 "attnlab: note: %s left out of this sharded run (it fits one result "
                 "on every image together; run it without --shard)\n",
                 name.c_str());
    settings.analyses.erase(name);
  }
}

int cmd_analyze(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "analyze");
  const bool analyses_named = args.has_flag("--analyses");
  AnalyzeRequest req = take_analyze_request(args, /*series=*/false);
  // A shard does its part of the image list and saves what a merge needs (shard.json).
  std::vector<std::string> list;
  for (const auto& im : req.images) list.push_back(im.path);
  const analysis::ShardRange part =
      shard_part(shard, int64_t(list.size()), "images", req.settings.images_per_forward);
  const std::vector<ImageInput> all_images = req.images;
  if (shard.sharded()) {
    restrict_to_shardable(req.settings, analyses_named);
    req.images.assign(all_images.begin() + part.begin, all_images.begin() + part.end);
  }
  const runtime::ComputeTarget target = compute_target(g);
  const auto t0 = std::chrono::steady_clock::now();
  ReadyModel model = load_ready_model(req.model, target);
  StageSeconds stages;
  stages.model = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // A names file must name the model's classes (checked before anything is written).
  nlohmann::json names_record = nullptr;
  if (!req.model.class_names.empty()) {
    const int64_t classes = model.config.value("num_classes", int64_t{1000});
    session::model_class_names(req.model, model.config, classes);
    names_record = {{"file", req.model.class_names_path}, {"classes", classes}};
  }
  analysis::OutputFolder folder(req.out, req.model.tag);
  analysis::BackgroundWriter writer(folder);  // the arrays reach the disk while images run
  session::AnalysisSession session(req.settings,
                                   [&](const analysis::Array& a) { writer.write_array(a); });
  if (shard.sharded()) session.for_shard();
  Progress progress("analyze", static_cast<int64_t>(req.images.size()));
  const std::vector<std::string> failed =
      analyse_images(session, *model.model, target, req.model.preprocessing, req.images, progress,
                     nullptr, &stages);
  writer.finish();
  if (session.images() == 0) throw std::runtime_error("no image could be analysed");

  nlohmann::json sidecar = run_description(g, target, req.settings);
  sidecar["model"] = model.description();
  sidecar["class_names"] = names_record;
  sidecar["images"] = images_json(req.images, failed);
  sidecar["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  sidecar["stage_seconds"] = stages.to_json();
  std::fprintf(stderr, "analyze: %s\n", stages.summary().c_str());
  for (const auto& w : session.warnings())
    std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
  for (const auto& note : session.skipped()) std::fprintf(stderr, "attnlab: %s\n", note.c_str());
  if (shard.sharded()) {
    const std::string state_dir = folder.dir() + "/" + kShardStateDir;
    nlohmann::json body = {
        {"model_tag", req.model.tag},        {"exit", failed.empty() ? kExitOk : kExitFailure},
        {"analyses", req.settings.analyses}, {"sidecar", sidecar},
        {"files", folder.files()},           {"session", session.save_state(state_dir)}};
    write_shard_manifest(shard, g, folder.dir(), "images", list, part, std::move(body),
                         req.settings.images_per_forward);
    std::printf("%s: shard %s: %lld image(s) analysed into %s (merge with attnlab merge)\n",
                req.model.tag.c_str(), shard.shard.text().c_str(),
                static_cast<long long>(session.images()), folder.dir().c_str());
    return failed.empty() ? kExitOk : kExitFailure;
  }
  const std::string sidecar_path = write_analyze_results(folder, session, req.settings, sidecar);
  std::printf("%s: %lld image(s) analysed, %zu files in %s (settings: %s)\n", req.model.tag.c_str(),
              static_cast<long long>(session.images()), folder.files_written() + 1,
              folder.dir().c_str(), sidecar_path.c_str());
  return failed.empty() ? kExitOk : kExitFailure;
}

int cmd_analyze_series(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "analyze-series");
  AnalyzeRequest req = take_analyze_request(args, /*series=*/true);
  // A shard does its part of the checkpoints (each over every image).
  const analysis::ShardRange part =
      shard_part(shard, int64_t(req.checkpoints.size()), "checkpoints");
  const runtime::ComputeTarget target = compute_target(g);
  const auto t0 = std::chrono::steady_clock::now();
  analysis::OutputFolder folder(req.out, req.model.tag);
  const SeriesResult series =
      analyse_series(req.model, req.checkpoints, req.images, req.settings, target, part);
  nlohmann::json sidecar = run_description(g, target, req.settings);
  sidecar["model"] = {{"config", req.model.config},
                      {"preset", req.model.preset},
                      {"preprocessing", req.model.preprocessing.describe()}};
  sidecar["checkpoints"] = series.checkpoints;
  sidecar["images"] = images_json(req.images, {});
  sidecar["warnings"] = series.warnings;
  sidecar["step_column"] = "the checkpoint's 'step' metadata when it has one, else its index";
  sidecar["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (const auto& w : series.warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
  if (shard.sharded()) {
    nlohmann::json tables = nlohmann::json::array();
    for (const auto& t : series.tables) tables.push_back(analysis::exact_table_json(t));
    write_shard_manifest(shard, g, folder.dir(), "checkpoints", req.checkpoints, part,
                         {{"model_tag", req.model.tag},
                          {"sidecar", sidecar},
                          {"tables", tables},
                          {"any_failed", series.any_failed},
                          {"exit", series.any_failed ? kExitFailure : kExitOk}});
    std::printf("analyze-series: shard %s: checkpoints %lld-%lld into %s\n",
                shard.shard.text().c_str(), static_cast<long long>(part.begin),
                static_cast<long long>(part.end - 1), folder.dir().c_str());
    return series.any_failed ? kExitFailure : kExitOk;
  }
  for (const auto& t : series.tables) folder.write_table(t);
  session::write_edits_file(folder, req.settings.edits);
  const std::string sidecar_path = folder.write_sidecar(sidecar);
  std::printf("%zu checkpoints analysed, %zu files in %s (settings: %s)\n", req.checkpoints.size(),
              folder.files_written() + 1, folder.dir().c_str(), sidecar_path.c_str());
  return series.any_failed ? kExitFailure : kExitOk;
}

int merge_analyze_series(const std::vector<ShardPart>& shards, const std::string& out,
                         const nlohmann::json& record) {
  nlohmann::json sidecar = shards.front().manifest.at("sidecar");
  nlohmann::json checkpoints = nlohmann::json::array(), warnings = nlohmann::json::array();
  double seconds = 0;
  bool any_failed = false;
  std::vector<std::pair<std::string, nlohmann::json>> shard_tables;
  for (const ShardPart& p : shards) {
    shard_tables.emplace_back(p.dir, p.manifest.at("tables"));
    const nlohmann::json& s = p.manifest.at("sidecar");
    for (const auto& c : s.at("checkpoints")) checkpoints.push_back(c);
    for (const auto& w : s.at("warnings"))
      if (std::find(warnings.begin(), warnings.end(), w) == warnings.end()) warnings.push_back(w);
    seconds += s.value("seconds", 0.0);
    any_failed = any_failed || p.manifest.value("any_failed", false);
  }
  // Each table's rows: every shard's checkpoints in the list's order.
  const std::vector<analysis::Table> tables = concatenated_tables(shard_tables);
  analysis::OutputFolder folder(out, shards.front().manifest.at("model_tag").get<std::string>());
  for (const auto& t : tables) folder.write_table(t);
  Args options(shards.front().manifest.at("options").get<std::vector<std::string>>());
  session::write_edits_file(folder, take_analysis_settings(options, "all").edits);
  sidecar["checkpoints"] = checkpoints;
  sidecar["warnings"] = warnings;
  sidecar["seconds"] = seconds;
  sidecar["merged_from"] = record;
  const std::string path = folder.write_sidecar(sidecar);
  std::printf("merge: %zu checkpoints of %zu shards, %zu files in %s (settings: %s)\n",
              checkpoints.size(), shards.size(), folder.files_written() + 1, folder.dir().c_str(),
              path.c_str());
  return any_failed ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
