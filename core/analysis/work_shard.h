// One shard of a long run (issue 50): which contiguous part of a sorted work list (images,
// checkpoints, images x heads) this process does, from `--shard I/N` or from a Slurm array
// job's environment, and the list's hash that every shard's manifest carries so that
// `attnlab merge` can tell shards of one run from shards of another. No LibTorch.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::analysis {

struct WorkShard {
  int64_t index = 0;  // 0 <= index < count
  int64_t count = 1;
  std::string source;  // "--shard", "SLURM_ARRAY_TASK_ID=5 (...)"; "" when not sharded
  bool sharded() const { return !source.empty(); }
  std::string text() const;  // "2/8"
};

// "I/N" with 0 <= I < N; std::invalid_argument naming the text otherwise.
WorkShard parse_work_shard(const std::string& text);

// The shard of a Slurm array task: SLURM_ARRAY_TASK_ID, _COUNT and _MIN (and _STEP when
// the array has one), index (ID - MIN) / STEP. nullopt outside an array job (no
// SLURM_ARRAY_TASK_ID); std::invalid_argument when the variables do not describe a
// contiguous array (`--array=1,5,9` has gaps: each task then needs --shard I/N).
using EnvLookup = std::function<const char*(const char*)>;
std::optional<WorkShard> slurm_array_shard(const EnvLookup& env);

// The items [begin, end) of a list of `total` that shard I of N does: contiguous, in list
// order, sizes differing by at most one, every item in exactly one shard.
struct ShardRange {
  int64_t begin = 0, end = 0;
};
ShardRange shard_range(int64_t total, const WorkShard& shard);

// SHA-256 of the list (each item's bytes, then a NUL), lowercase hex: equal lists only.
std::string work_list_hash(const std::vector<std::string>& items);

}  // namespace attnlab::analysis
