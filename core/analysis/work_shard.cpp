// Shard parsing, Slurm's array variables, contiguous ranges and the work list's hash.
#include "core/analysis/work_shard.h"

#include <algorithm>
#include <stdexcept>

#include "core/analysis/sha256.h"

namespace attnlab::analysis {
namespace {

// A non-negative decimal integer, the whole text; -1 otherwise.
int64_t whole_number(const std::string& text) {
  if (text.empty() || text.size() > 12) return -1;
  int64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

}  // namespace

std::string WorkShard::text() const {
  return std::to_string(index) + "/" + std::to_string(count);
}

WorkShard parse_work_shard(const std::string& text) {
  const auto slash = text.find('/');
  const int64_t i = slash == std::string::npos ? -1 : whole_number(text.substr(0, slash));
  const int64_t n = slash == std::string::npos ? -1 : whole_number(text.substr(slash + 1));
  if (i < 0 || n < 1)
    throw std::invalid_argument("--shard wants I/N (shard I of N, counted from 0), not '" + text +
                                "'");
  if (i >= n)
    throw std::invalid_argument("--shard " + text + ": the shards of " + std::to_string(n) +
                                " are 0 to " + std::to_string(n - 1));
  return {i, n, "--shard"};
}

std::optional<WorkShard> slurm_array_shard(const EnvLookup& env) {
  const char* id_text = env("SLURM_ARRAY_TASK_ID");
  if (!id_text) return std::nullopt;
  const auto number = [&](const char* name, bool required, int64_t fallback) {
    const char* v = env(name);
    if (!v) {
      if (required)
        throw std::invalid_argument(std::string("a Slurm array task without ") + name +
                                    " (Slurm 17.11 or newer sets it); give --shard I/N");
      return fallback;
    }
    const int64_t n = whole_number(v);
    if (n < 0) throw std::invalid_argument(std::string(name) + "='" + v + "' is not a number");
    return n;
  };
  const int64_t id = number("SLURM_ARRAY_TASK_ID", true, 0);
  const int64_t count = number("SLURM_ARRAY_TASK_COUNT", true, 0);
  const int64_t min = number("SLURM_ARRAY_TASK_MIN", true, 0);
  const int64_t step = std::max<int64_t>(1, number("SLURM_ARRAY_TASK_STEP", false, 1));
  const int64_t max = number("SLURM_ARRAY_TASK_MAX", false, min + (count - 1) * step);
  const std::string described = "SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " of " +
                                std::to_string(count) + " tasks from " + std::to_string(min);
  // --array=0-9 (or 3-12, or 0-18:2) is contiguous; a list with gaps is not, and the task
  // count cannot say which shard a task is.
  if (count < 1 || id < min || (id - min) % step != 0 || min + (count - 1) * step != max)
    throw std::invalid_argument(described +
                                ": the array is not a contiguous range (--array=A-B[:S]); give "
                                "each task --shard I/N");
  WorkShard s{(id - min) / step, count, described};
  if (s.index >= s.count) throw std::invalid_argument(described + ": the task is past the count");
  return s;
}

ShardRange shard_range(int64_t total, const WorkShard& shard) {
  // floor(total * i / n): contiguous, and the sizes differ by at most one (total * i
  // stays far below 2^63 for any list a run can hold).
  const auto edge = [&](int64_t i) { return total * i / shard.count; };
  return {edge(shard.index), edge(shard.index + 1)};
}

std::string work_list_hash(const std::vector<std::string>& items) {
  std::string bytes;
  for (const auto& item : items) {
    bytes += item;
    bytes += '\0';
  }
  return sha256_hex(bytes.data(), bytes.size());
}

}  // namespace attnlab::analysis
