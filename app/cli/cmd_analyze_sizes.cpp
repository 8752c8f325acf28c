// `attnlab analyze-sizes`: the same statistics at a list of input sizes (issue 26's
// resolution sweep; HiLo's point that cost and behaviour change with resolution, RALA's
// rank at 3136 tokens), as size_sweep.h runs it: every table becomes "<table>_sizes" with
// the size as its x, beside "sizes": tokens and time per image at each size. Figures:
// every over_sizes statistic (entropy, map rank, locality, rank, outliers, spectra)
// against the input size, SVG and PDF.
//   analyze-sizes --model M --img-sizes 224,288,384 --images FILES|DIR --out DIR [options]
#include <ATen/ATen.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <set>

#include "app/cli/merge_commands.h"
#include "app/cli/shard_run.h"
#include "app/cli/size_sweep.h"
#include "app/session/analysis_registry.h"
#include "app/session/edited_input.h"
#include "core/analysis/output_folder.h"
#include "core/runtime/precision.h"
#include "viz/render.h"

namespace attnlab::cli {

namespace {

// The sweep's tables, figures and sidecar (`sidecar` with the figures and warnings added):
// what the command and merge write. Returns the number of files.
size_t write_size_sweep(analysis::OutputFolder& folder, SizeSweep& sweep,
                        const session::AnalysisSettings& settings, nlohmann::json sidecar) {
  std::vector<std::string>& warnings = sweep.warnings;
  session::SeriesResults& results = sweep.results;
  results.name = folder.model_tag();
  for (const auto& t : results.tables) folder.write_table(t);
  folder.write_table(sweep.costs);
  session::write_edits_file(folder, settings.edits);
  nlohmann::json figures = nlohmann::json::array();
  for (const auto& a : session::analyses()) {
    if (!a.series_figure || !a.over_sizes || !settings.analyses.count(a.name)) continue;
    try {
      const viz::CaptionedFigure f = a.series_figure(results);
      for (const auto format : {viz::FigureFormat::Svg, viz::FigureFormat::Pdf}) {
        const std::string path = folder.dir() + "/" + folder.model_tag() + "__" + a.name +
                                 "_sizes." + viz::figure_format_name(format);
        viz::write_figure(f.figure, path, format);
        figures.push_back({{"file", path}, {"caption", f.caption}});
      }
    } catch (const std::exception& e) {
      warnings.push_back("figure " + a.name + "_sizes: " + e.what());
    }
  }
  sidecar["sizes"] = sweep.per_size;
  sidecar["figures"] = figures;
  sidecar["warnings"] = warnings;
  const std::string sidecar_path = folder.write_sidecar(sidecar);
  for (const auto& w : warnings) std::fprintf(stderr, "attnlab: warning: %s\n", w.c_str());
  std::printf("%zu sizes analysed, %zu files in %s (settings: %s)\n", sweep.per_size.size(),
              folder.files_written() + figures.size() + 1, folder.dir().c_str(),
              sidecar_path.c_str());
  return folder.files_written() + figures.size() + 1;
}

}  // namespace

int merge_analyze_sizes(const std::vector<ShardPart>& shards, const std::string& out,
                        const nlohmann::json& record) {
  const nlohmann::json& first = shards.front().manifest;
  Args options(first.at("options").get<std::vector<std::string>>());
  session::AnalysisSettings settings = take_analysis_settings(options, size_sweep_analyses());
  settings.analyses = first.at("analyses").get<std::set<std::string>>();
  const std::vector<int64_t> sizes = first.at("img_sizes").get<std::vector<int64_t>>();
  // Each size's sessions of every shard, in the list's order.
  std::vector<SweepShard> parts;
  for (const ShardPart& p : shards)
    parts.push_back({p.dir + "/" + kShardStateDir, p.manifest.at("states")});
  const std::string tag = first.at("model_tag").get<std::string>();
  SizeSweep sweep = merge_sweep(settings, sizes, tag, parts);
  analysis::OutputFolder folder(out, tag);
  nlohmann::json sidecar = first.at("sidecar");
  sidecar["merged_from"] = record;
  write_size_sweep(folder, sweep, settings, sidecar);
  return kExitOk;
}

int cmd_analyze_sizes(Args args, const GlobalOptions& g) {
  const ShardRun shard = take_shard(args, "analyze-sizes");
  const bool analyses_named = args.has_flag("--analyses");
  const std::string sizes_text = args.take_option("--img-sizes");
  if (sizes_text.empty()) throw UsageError("analyze-sizes needs --img-sizes S1,S2,... (pixels)");
  const std::vector<int64_t> sizes = parse_img_sizes(sizes_text);
  AnalyzeRequest req = take_analyze_request(args, /*series=*/false, size_sweep_analyses());
  if (!req.model_request.img_size.empty())
    throw UsageError("analyze-sizes takes --img-sizes, not --img-size");
  // A shard does its part of the images at every size.
  std::vector<std::string> list;
  for (const auto& im : req.images) list.push_back(im.path);
  const analysis::ShardRange part =
      shard_part(shard, int64_t(list.size()), "images", req.settings.images_per_forward);
  if (shard.sharded()) {
    restrict_to_shardable(req.settings, analyses_named);
    req.images =
        std::vector<ImageInput>(req.images.begin() + part.begin, req.images.begin() + part.end);
  }
  const runtime::ComputeTarget target = compute_target(g);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string state_dir = shard.sharded() ? req.out + "/" + kShardStateDir : "";
  SizeSweep sweep = analyse_sizes(req.model_request, "analyze-sizes", sizes, req.images,
                                  req.settings, target, state_dir);
  nlohmann::json sidecar = run_description(g, target, req.settings);
  sidecar["command"] = "analyze-sizes";
  sidecar["img_sizes"] = sizes;
  sidecar["seconds"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (shard.sharded()) {
    write_shard_manifest(shard, g, req.out, "images", list, part,
                         {{"model_tag", req.model.tag + "_sizes"},
                          {"analyses", req.settings.analyses},
                          {"img_sizes", sizes},
                          {"sidecar", sidecar},
                          {"states", sweep.states},
                          {"exit", sweep.any_failed ? kExitFailure : kExitOk}},
                         req.settings.images_per_forward);
    std::printf("analyze-sizes: shard %s: %lld image(s) at %zu sizes into %s\n",
                shard.shard.text().c_str(), static_cast<long long>(part.end - part.begin),
                sizes.size(), req.out.c_str());
    return sweep.any_failed ? kExitFailure : kExitOk;
  }
  analysis::OutputFolder folder(req.out, req.model.tag + "_sizes");
  write_size_sweep(folder, sweep, req.settings, sidecar);
  return sweep.any_failed ? kExitFailure : kExitOk;
}

}  // namespace attnlab::cli
