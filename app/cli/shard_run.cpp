// --shard and Slurm's array variables, the shard's part of the list, its manifest.
#include "app/cli/shard_run.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "app/cli/version.h"
#include "core/analysis/export.h"
#include "core/runtime/threads.h"

namespace attnlab::cli {

ShardRun take_shard(Args& args, const std::string& command) {
  ShardRun run;
  run.command = command;
  run.words = args.remaining();
  const bool given = args.has_flag("--shard");
  const std::string text = args.take_option("--shard");
  if (given && text.empty()) throw UsageError("--shard wants I/N (shard I of N, counted from 0)");
  try {
    if (!text.empty()) {
      run.shard = analysis::parse_work_shard(text);
    } else if (auto s = analysis::slurm_array_shard([](const char* n) { return std::getenv(n); })) {
      run.shard = *s;
      std::fprintf(stderr, "%s: shard %s from Slurm (%s)\n", command.c_str(),
                   run.shard.text().c_str(), run.shard.source.c_str());
    }
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  // The run's options: what every shard of it must share (their --out differ).
  for (size_t i = 0; i < run.words.size(); ++i) {
    if ((run.words[i] == "--shard" || run.words[i] == "--out") && i + 1 < run.words.size()) {
      ++i;
      continue;
    }
    run.options.push_back(run.words[i]);
  }
  return run;
}

analysis::ShardRange shard_part(const ShardRun& run, int64_t total, const std::string& what,
                                int64_t unit) {
  if (!run.sharded()) return {0, total};
  unit = std::max<int64_t>(1, unit);
  const analysis::ShardRange units = analysis::shard_range((total + unit - 1) / unit, run.shard);
  const analysis::ShardRange r{std::min(total, units.begin * unit),
                               std::min(total, units.end * unit)};
  if (r.begin == r.end)
    throw std::runtime_error("shard " + run.shard.text() + " has no " + what + ": " +
                             std::to_string(total) + " " + what + " for " +
                             std::to_string(run.shard.count) + " shards");
  std::fprintf(stderr, "%s: shard %s: %s %lld-%lld of %lld\n", run.command.c_str(),
               run.shard.text().c_str(), what.c_str(), static_cast<long long>(r.begin),
               static_cast<long long>(r.end - 1), static_cast<long long>(total));
  return r;
}

void write_shard_manifest(const ShardRun& run, const GlobalOptions& g, const std::string& out_dir,
                          const std::string& list_kind, const std::vector<std::string>& list,
                          const analysis::ShardRange& range, nlohmann::json body, int64_t unit) {
  nlohmann::json m;
  m["attnlab_shard"] = 1;  // this manifest's format
  m["command"] = run.command;
  m["command_line"] = run.words;
  m["options"] = run.options;
  m["device"] = g.device;
  m["threads"] = runtime::current_threads();  // merge fits with as many (feature PCA)
  m["dtype"] = g.dtype;
  m["attnlab_version"] = version();
  m["attnlab_revision"] = git_revision();
  m["list"] = {
      {"kind", list_kind}, {"size", list.size()}, {"hash", analysis::work_list_hash(list)}};
  m["shard"] = {{"index", run.shard.index},   {"count", run.shard.count},
                {"source", run.shard.source}, {"unit", unit},
                {"begin", range.begin},       {"end", range.end}};
  m["items"] = std::vector<std::string>(list.begin() + range.begin, list.begin() + range.end);
  for (auto& [key, value] : body.items()) m[key] = std::move(value);
  analysis::write_json(out_dir + "/" + kShardManifest, m);
}

}  // namespace attnlab::cli
