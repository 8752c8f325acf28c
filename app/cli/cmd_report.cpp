// `attnlab report`: run the analyses of several models over images and write every paper
// figure (SVG, PDF, PNG), the statistics of `analyze`, and an index.html with captions.
//   report --models M1 M2 ... --images FILES|DIR --out DIR [--formats svg,pdf,png] [--dpi N]
//          [--series CKPT...] [--colormap NAME] [--upsample nearest|bilinear] [--alpha A]
//          [--norm minmax|divmax] [--layer last|N|N/T] [--head N | --head-fusion F]
//          [--map query|rollout] [--compare-scale per-panel|shared]
//          [--compare-difference A,B] [--figures KIND,...] [--img-size H[,W]
//          [--pos-interpolation bicubic|bicubic_antialias]] [analysis options as analyze]
//          [--complexity-scales 1,2,3] (on request, or --figures complexity)
//          [--bench [--bench-sides 14,28,56]]
//          [--img-sizes S1,S2,...]   a resolution sweep of each model (size_sweep.h)
//   (the figure options: report_options.h; they reproduce a GUI view, docs/GUI.md)
//   (each M a checkpoint, or a model config .json for untrained weights)
//          [--embeddings DIR... [--projection pca|tsne|umap] [--perplexity P] [--neighbors K]
//           [--min-dist D] [--iterations N] [--seed S]]   folders of `attnlab embed`: the
//           index's "Datasets at a glance" (report_datasets.h): each projected once (the
//           options of `attnlab project`, one parser: session/projection_options.h), coloured
//           by label, prediction and correct/wrong, the head extremes with embed --heads, the
//           coordinates as CSV. Alone (no --models/--images) or beside the models. Not with
//           --shard (a usage error).
//   report --embeddings DIR... --out DIR [--projection ...] [--formats ...] [--dpi N]
//                                              the datasets at a glance alone
//   report --demo [--out DIR] [--images ...]   the zoo's models, four demo images, every
//                                              analysis (the opt-in ERF and heads too, not
//                                              faithfulness) and
//                                              Castling's checkpoint series
// A model, image or figure that fails is reported (stderr and index.html) and the rest is
// still written; the exit status is then 1. Every file is written atomically.
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <set>

#include "app/cli/output_failure.h"
#include "app/cli/report_page.h"
#include "app/cli/report_shard.h"
#include "app/cli/shard_run.h"
#include "app/cli/size_sweep.h"
#include "app/session/analysis_registry.h"
#include "app/session/edited_input.h"
#include "core/analysis/output_folder.h"
#include "core/io/file_bytes.h"
#include "models/config_mechanism.h"

namespace fs = std::filesystem;

namespace attnlab::cli {

std::set<std::string> report_analyses_of_kind(const session::AnalysisSettings& settings,
                                              bool session::AnalysisInfo::*kind) {
  std::set<std::string> asked, every;
  for (const auto& a : session::analyses())
    if (a.*kind) {
      every.insert(a.name);
      if (settings.analyses.count(a.name)) asked.insert(a.name);
    }
  return asked.empty() ? every : asked;
}

session::ModelRequest report_model_request(const ReportRequest& req, const std::string& m) {
  session::ModelRequest request = session::model_entry_request(m);
  if (req.random_init) request.random_init = true;
  request.img_size = req.img_size;
  if (!req.pos_interpolation.empty()) request.pos_interpolation = req.pos_interpolation;
  request.merge = req.merge;
  request.class_names_path = req.names_path;  // a CLIP's zero-shot head is made of them
  request.prompts = req.prompts;
  request.prompt_templates = req.prompt_templates;
  request.hash_checkpoint = true;  // for the model's sidecar
  return request;
}

int cmd_report(Args args, const GlobalOptions& g) {
  const ShardRun shard_run = take_shard(args, "report");
  const bool analyses_named = args.has_flag("--analyses");
  ReportRequest req = take_report_request(args);
  // The datasets are drawn whole by the run that names them: a shard would draw each
  // folder again, and the merge reads the options of the shards only.
  if (shard_run.sharded() && !req.datasets.dirs.empty())
    throw UsageError(
        "report: --embeddings is not sharded: run the datasets' report without --shard "
        "(each folder is projected once, in one process)");
  // A shard: its part of the images for every model, the CKA between models and each
  // resolution sweep; its part of the checkpoints of a series (over every image).
  std::vector<std::string> list;
  for (const auto& im : req.images) list.push_back(im.path);
  const analysis::ShardRange part =
      shard_part(shard_run, int64_t(list.size()), "images", req.settings.images_per_forward);
  const std::vector<ImageInput> images(req.images.begin() + part.begin,
                                       req.images.begin() + part.end);
  const bool sharded = shard_run.sharded();
  if (sharded) restrict_to_shardable(req.settings, analyses_named);
  const session::AnalysisSettings& settings = req.settings;
  const std::string& out = req.out;

  const auto t0 = std::chrono::steady_clock::now();
  const runtime::ComputeTarget target = compute_target(g);
  if (!sharded) create_output_folder(fs::path(out) / "figures");
  const std::string stats_dir = (fs::path(out) / "stats").string();
  create_output_folder(stats_dir);
  const std::string state_dir = (fs::path(out) / kShardStateDir).string();
  const nlohmann::json run = run_description(g, target, settings);
  // The what-if edits beside the figures (every figure is of the edited pictures).
  if (!settings.edits.empty() && !sharded)
    io::write_file_atomic((fs::path(out) / session::kEditsFile).string(),
                          session::edits_file_text(settings.edits));
  ReportParts parts;
  ReportShardState saved;  // a shard's
  std::vector<std::string>& errors = parts.errors;

  std::vector<ModelChoice> analysed;            // the models that worked, for CKA between models
  std::vector<session::ModelRequest> requests;  // of `analysed`, for the resolution sweeps
  for (const auto& m : req.model_args) {
    try {  // a bad checkpoint (unreadable, foreign, wrong architecture) skips that model only
      session::ModelRequest request = report_model_request(req, m);
      ModelChoice c = choose_request(request);
      if (!req.class_names.empty()) {
        c.class_names = req.class_names;
        c.class_names_path = req.names_path;
      }
      ReportModelShard model_shard{state_dir, nullptr};
      parts.results.push_back(run_report_model(c, images, settings, target, stats_dir, run,
                                               sharded ? &model_shard : nullptr));
      if (sharded) saved.models.push_back(std::move(model_shard.saved));
      parts.cost_models.push_back({c.tag, request, models::config_mechanism(c.config)});
      analysed.push_back(c);
      requests.push_back(request);
      for (const auto& f : parts.results.back().failed_images)
        errors.push_back(c.tag + ": image " + f + " could not be analysed");
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: model %s: %s (skipped)\n", m.c_str(), e.what());
      errors.push_back("model " + m + ": " + e.what());
    }
  }
  // The analyses measured over a checkpoint series or a resolution sweep: the registry's
  // analyses of that kind among those asked for, or all of them when none was asked for.
  const std::set<std::string> series_analyses =
      report_analyses_of_kind(settings, &session::AnalysisInfo::series);
  const auto& series_files = req.series_files;
  const analysis::ShardRange series_part =
      sharded ? analysis::shard_range(int64_t(series_files.size()), shard_run.shard)
              : analysis::ShardRange{0, int64_t(series_files.size())};
  if (!series_files.empty() && !series_analyses.empty() && series_part.end > series_part.begin) {
    try {
      session::AnalysisSettings ss = settings;
      ss.analyses = series_analyses;
      ModelChoice base;
      {
        Args one({"--model", series_files.front()});
        base = take_model_choice(one);
        base.hash_checkpoint = true;  // each checkpoint's, as with_checkpoint takes it
      }
      session::SeriesResults s;
      s.name = report_series_name(series_files);
      const SeriesResult r =
          analyse_series(base, series_files, req.images, ss, target, series_part);
      if (sharded) {
        saved.series = r.tables;
      } else {
        analysis::OutputFolder folder(stats_dir, s.name);
        for (const auto& t : r.tables) folder.write_table(t);
        s.tables = r.tables;
        parts.series = std::move(s);
      }
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: checkpoint series: %s (skipped)\n", e.what());
      errors.push_back(std::string("checkpoint series: ") + e.what());
    }
  }

  // Each model's resolution sweep at every size of --img-sizes (a model that cannot take
  // one is reported).
  if (!req.sweep_sizes.empty()) {
    session::AnalysisSettings ss = settings;
    ss.analyses = report_analyses_of_kind(settings, &session::AnalysisInfo::over_sizes);
    for (size_t m = 0; m < analysed.size(); ++m) {
      try {
        session::ModelRequest r = requests[m];
        r.img_size.clear();
        const std::string sweep_dir =
            sharded ? state_dir + "/" + analysis::file_safe(analysed[m].tag) + "_sizes" : "";
        SizeSweep sweep =
            analyse_sizes(r, analysed[m].tag, req.sweep_sizes, images, ss, target, sweep_dir);
        if (sweep.any_failed)
          errors.push_back(analysed[m].tag + ": an image failed in the resolution sweep");
        if (sharded) {
          saved.sweeps.push_back({{"tag", analysed[m].tag},
                                  {"dir", analysis::file_safe(analysed[m].tag) + "_sizes"},
                                  {"states", sweep.states}});
          continue;
        }
        analysis::OutputFolder folder(stats_dir, analysed[m].tag + "_sizes");
        for (const auto& t : sweep.results.tables) folder.write_table(t);
        folder.write_table(sweep.costs);
        parts.sweeps.push_back(std::move(sweep.results));
      } catch (const std::exception& e) {
        if (is_output_failure(e)) throw;
        std::fprintf(stderr, "attnlab: error: resolution sweep of %s: %s (skipped)\n",
                     analysed[m].tag.c_str(), e.what());
        errors.push_back("resolution sweep of " + analysed[m].tag + ": " + e.what());
      }
    }
  }

  // CKA between models: a pass of its own over the images (report_cka.h).
  if (settings.analyses.count("cka") && analysed.size() >= 2) {
    try {
      const JointHsic joint =
          joint_hsic(analysed, images, target, "report: cka between models", settings.edits);
      if (sharded) {
        saved.cka = save_joint_hsic(joint, state_dir);
      } else {
        std::vector<std::string> tags;
        for (const auto& c : analysed) tags.push_back(c.tag);
        parts.cka = cross_model_cka_of(tags, joint);
        analysis::OutputFolder folder(stats_dir, "models");
        folder.write_table(parts.cka->table);
        for (const auto& f : parts.cka->failed)
          errors.push_back("cka between models: image " + f + " could not be analysed");
      }
    } catch (const std::exception& e) {
      if (is_output_failure(e)) throw;
      std::fprintf(stderr, "attnlab: error: %s (skipped)\n", e.what());
      errors.push_back(e.what());
    }
  }
  if (sharded) {
    saved.errors = errors;
    write_shard_manifest(shard_run, g, out, "images", list, part,
                         report_shard_body(saved, settings, run, t0), settings.images_per_forward);
    std::printf(
        "report: shard %s: %zu model(s) x %zu image(s) into %s (merge with attnlab "
        "merge)\n",
        shard_run.shard.text().c_str(), parts.results.size(), images.size(), out.c_str());
    return errors.empty() ? kExitOk : kExitFailure;
  }
  // The datasets at a glance (report_datasets.h): after the models, before their figures.
  parts.datasets = write_report_datasets(req.datasets, req.options, out, errors);
  return finish_report(req, parts, target, run, stats_dir, t0);
}

}  // namespace attnlab::cli
