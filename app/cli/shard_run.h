// The shard side of a run split over many processes (issue 50): `--shard I/N`, or a Slurm
// array task's own index; which part of the work list this process does; and the
// manifest (<out>/shard.json) that `attnlab merge` reads. The manifest is written last,
// atomically: a folder without one is a shard that did not finish.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/cli/cli_common.h"
#include "core/analysis/work_shard.h"

namespace attnlab::cli {

inline constexpr const char* kShardManifest = "shard.json";
inline constexpr const char* kShardStateDir = "shard_state";

struct ShardRun {
  analysis::WorkShard shard;         // shard.sharded() false: a whole run
  std::string command;               // "analyze", "faithfulness", ...
  std::vector<std::string> options;  // the arguments less --shard and --out: one run's
  std::vector<std::string> words;    // every argument, as given
  bool sharded() const { return shard.sharded(); }
};

// Takes --shard I/N from `args`; without it, a Slurm array task's index (said on stderr).
// Call first, before the command takes its other options: it records them.
ShardRun take_shard(Args& args, const std::string& command);

// The part of a work list of `total` items this process does (all of it unsharded); says
// "analyze: shard 2/8: images 100-149 of 400" on stderr. With `unit` > 1 (the images of one
// forward pass) the parts begin and end on whole units, so every batch a shard runs is a
// batch of the single run, with the same numbers. Throws std::runtime_error for an empty
// part (more shards than units).
analysis::ShardRange shard_part(const ShardRun& run, int64_t total, const std::string& what,
                                int64_t unit = 1);

// Writes <out_dir>/shard.json: the run's identity (command, options, attnlab's version and
// revision, --device/--dtype), the work list's kind, size and hash, this shard's index,
// count and range, and `body` (what the command's merge needs: additive statistics,
// per-item rows, the files it wrote).
void write_shard_manifest(const ShardRun& run, const GlobalOptions& g, const std::string& out_dir,
                          const std::string& list_kind, const std::vector<std::string>& list,
                          const analysis::ShardRange& range, nlohmann::json body, int64_t unit = 1);

}  // namespace attnlab::cli
