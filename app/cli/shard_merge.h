// The merge side of a sharded run (issue 50): reading the shards' manifests, checking that
// they are one run's (command, options, attnlab version and revision, device and dtype,
// the work list's hash) and cover its list exactly once, and the sidecar that names them.
// Each command's own merge (cmd_merge.cpp's table) then rebuilds the single run's files
// from the shards' additive statistics.
#pragma once

#include <nlohmann/json.hpp>

#include "core/analysis/table.h"

#include <string>
#include <vector>

namespace attnlab::cli {

struct ShardPart {
  std::string dir;          // the shard's output folder
  nlohmann::json manifest;  // its shard.json
  int64_t index = 0, begin = 0, end = 0;
};

// The shards of one run, in shard order. Throws std::runtime_error naming the folder
// without a manifest (a shard that did not finish), the option or version that differs,
// the shards missing (with the items they hold) or given twice.
std::vector<ShardPart> read_shards(const std::vector<std::string>& dirs);

// Tables whose rows are the items' own (a series' rows per checkpoint), from each shard's
// list of exact tables (folder, list) in the shards' order: one table per name, in the order
// the names first appear, its rows shard after shard. Throws std::runtime_error naming the
// folder of a malformed table or one with other columns.
std::vector<analysis::Table> concatenated_tables(
    const std::vector<std::pair<std::string, nlohmann::json>>& shard_tables);

// The merged run's merge.json: the shards (folder, index, range, where the index came
// from, revision, seconds) and the list they covered.
nlohmann::json merge_record(const std::vector<ShardPart>& shards);

}  // namespace attnlab::cli
