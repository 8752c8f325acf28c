// `attnlab merge SHARD_DIR... --out DIR`: the single run's output from the folders of a run
// split with --shard I/N (or a Slurm array). read_shards checks that the folders are one
// run's and cover its work list once; the command's merge below adds the shards' saved
// statistics in the list's order (per-image rows replayed, compensated sums added, curves
// concatenated), recomputes means, areas, CKA and ranks, and writes the files and figures
// the single run writes, with merge.json naming the shards. A shard that failed is re-run
// alone with its --shard I/N, then merged with the others.
#include <ATen/ATen.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <set>

#include "app/cli/analyze_common.h"
#include "app/cli/cli_common.h"
#include "app/cli/merge_commands.h"
#include "app/cli/shard_merge.h"
#include "app/cli/shard_run.h"
#include "app/session/analysis_session.h"
#include "core/analysis/export.h"
#include "core/analysis/output_folder.h"
#include "core/runtime/threads.h"

namespace attnlab::cli {

int merge_analyze(const std::vector<ShardPart>& shards, const std::string& out,
                  const nlohmann::json& record) {
  const nlohmann::json& first = shards.front().manifest;
  Args options(first.at("options").get<std::vector<std::string>>());
  session::AnalysisSettings settings = take_analysis_settings(options, "all");
  settings.analyses = first.at("analyses").get<std::set<std::string>>();
  analysis::OutputFolder folder(out, first.at("model_tag").get<std::string>());
  // Arrays of the analyses fitted at the end (feature_pca's) follow the adopted ones.
  session::AnalysisSession session(settings,
                                   [&](const analysis::Array& a) { folder.write_array(a); });
  nlohmann::json images = nlohmann::json::array();
  double seconds = 0;
  for (const ShardPart& p : shards) {
    // The per-image arrays, in the shards' order: the order the single run wrote them.
    for (const auto& entry : p.manifest.at("files")) folder.adopt_file(p.dir, entry);
    session.absorb_state(p.manifest.at("session"), p.dir + "/" + kShardStateDir);
    for (const auto& im : p.manifest.at("sidecar").at("images")) images.push_back(im);
    seconds += p.manifest.at("sidecar").value("seconds", 0.0);
  }
  session.finish();
  nlohmann::json sidecar = first.at("sidecar");
  sidecar.erase("stage_seconds");
  sidecar["images"] = images;
  sidecar["seconds"] = seconds;  // the shards' own time, summed
  sidecar["merged_from"] = record;
  const std::string sidecar_path = write_analyze_results(folder, session, settings, sidecar);
  std::printf("merge: %lld image(s) of %zu shards, %zu files in %s (settings: %s)\n",
              static_cast<long long>(session.images()), shards.size(), folder.files_written() + 1,
              folder.dir().c_str(), sidecar_path.c_str());
  return kExitOk;
}

namespace {

struct Merger {
  const char* command;
  int (*merge)(const std::vector<ShardPart>&, const std::string&, const nlohmann::json&);
};

// One line per command that can be sharded.
const Merger kMergers[] = {
    {"analyze", merge_analyze},
    {"faithfulness", merge_faithfulness},
    {"classify", merge_classify},
    {"eval", merge_eval},
    {"embed", merge_embed},
    {"head-importance", merge_head_importance},
    {"analyze-sizes", merge_analyze_sizes},
    {"analyze-series", merge_analyze_series},
    {"report", merge_report},
};

}  // namespace

int cmd_merge(Args args, const GlobalOptions& g) {
  const std::string out = args.take_option("--out");
  const std::vector<std::string> dirs = args.positionals();
  for (const auto& w : args.remaining())
    if (w.rfind("--", 0) == 0) throw UsageError("merge: unknown option " + w);
  if (out.empty()) throw UsageError("merge needs --out DIR");
  if (dirs.empty())
    throw UsageError("merge needs the shards' folders: merge SHARD_DIR... --out DIR");
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<ShardPart> shards = read_shards(dirs);
  const std::string command = shards.front().manifest.at("command").get<std::string>();
  nlohmann::json record = merge_record(shards);
  // Fitted at merge (feature PCA): with the shards' threads unless told, so that the fit's
  // reductions round as the single run's did.
  if (g.threads == 0 && std::getenv("ATTNLAB_THREADS") == nullptr)
    runtime::configure_threads(shards.front().manifest.value("threads", 0));
  for (const Merger& m : kMergers) {
    if (command != m.command) continue;
    int rc = m.merge(shards, out, record);
    // A shard that skipped an image (or a model) makes the merged run's status its status.
    for (const ShardPart& p : shards)
      if (p.manifest.value("exit", 0) != kExitOk) {
        std::fprintf(stderr,
                     "attnlab: %s: that shard had problems (see its log); the merged "
                     "run has them too\n",
                     p.dir.c_str());
        rc = kExitFailure;
      }
    record["seconds"] =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    analysis::write_json(out + "/merge.json", record);
    return rc;
  }
  throw std::runtime_error("merge: shards of '" + command + "', which this attnlab cannot merge");
}

}  // namespace attnlab::cli
