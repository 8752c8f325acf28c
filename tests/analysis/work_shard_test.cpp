// core/analysis/work_shard.h (issue 50): `--shard I/N` parsed or refused with a message that
// names the text; a Slurm array task's shard from its environment (a fake lookup here, so
// nothing depends on the process's own variables): contiguous arrays with and without a
// step, a sparse array refused with the advice to give --shard; shard_range covering a list
// exactly once in contiguous parts of sizes that differ by at most one; and the work list's
// hash telling lists apart.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis/work_shard.h"

namespace {

using attnlab::analysis::EnvLookup;
using attnlab::analysis::parse_work_shard;
using attnlab::analysis::shard_range;
using attnlab::analysis::ShardRange;
using attnlab::analysis::slurm_array_shard;
using attnlab::analysis::work_list_hash;
using attnlab::analysis::WorkShard;

// A lookup over a fixed set of variables (none of the process's own).
EnvLookup ws_fake_env(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](const char* name) -> const char* {
    const auto it = vars.find(name);
    return it == vars.end() ? nullptr : it->second.c_str();
  };
}

// The message of the std::invalid_argument `f` throws ("" and a failure when it throws
// nothing or something else).
template <typename F>
std::string ws_refusal(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not std::invalid_argument: " << e.what();
    return {};
  }
  ADD_FAILURE() << "nothing thrown";
  return {};
}

}  // namespace

TEST(WorkShard, ParsesIndexOfCount) {
  const WorkShard first = parse_work_shard("0/1");
  EXPECT_EQ(first.index, 0);
  EXPECT_EQ(first.count, 1);
  EXPECT_TRUE(first.sharded());
  EXPECT_EQ(first.source, "--shard");
  EXPECT_EQ(first.text(), "0/1");
  const WorkShard s = parse_work_shard("3/8");
  EXPECT_EQ(s.index, 3);
  EXPECT_EQ(s.count, 8);
  EXPECT_EQ(s.text(), "3/8");
  EXPECT_FALSE(WorkShard{}.sharded());  // the default: a whole run
}

TEST(WorkShard, RefusesMalformedTextNamingIt) {
  for (const std::string text : {"", "8/8", "1/0", "-1/2", "a/2", "1/2/3", "1/", "/2", "3", " 1/2",
                                 "1/2 ", "+1/2", "0x1/2"}) {
    SCOPED_TRACE("'" + text + "'");
    const std::string message = ws_refusal([&] { parse_work_shard(text); });
    EXPECT_NE(message.find("--shard"), std::string::npos) << message;
    EXPECT_NE(message.find(text), std::string::npos) << message;
  }
  // The out-of-range one says which indices there are.
  EXPECT_NE(ws_refusal([] { parse_work_shard("8/8"); }).find("0 to 7"), std::string::npos);
  // Quoted, so that the empty text is visible in the message.
  EXPECT_NE(ws_refusal([] { parse_work_shard(""); }).find("''"), std::string::npos);
}

TEST(WorkShard, NoSlurmArrayWithoutTaskId) {
  EXPECT_FALSE(slurm_array_shard(ws_fake_env({})).has_value());
  // The other variables alone (a job that is not an array task) are no array either.
  EXPECT_FALSE(slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_COUNT", "8"},
                                              {"SLURM_ARRAY_TASK_MIN", "0"},
                                              {"SLURM_JOB_ID", "17"}}))
                   .has_value());
}

TEST(WorkShard, SlurmArrayIndexCountsFromTheMinimum) {
  // --array=2-9: task 5 is the fourth of eight.
  const auto s = slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_ID", "5"},
                                                {"SLURM_ARRAY_TASK_COUNT", "8"},
                                                {"SLURM_ARRAY_TASK_MIN", "2"},
                                                {"SLURM_ARRAY_TASK_MAX", "9"}}));
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->index, 3);
  EXPECT_EQ(s->count, 8);
  EXPECT_TRUE(s->sharded());
  EXPECT_NE(s->source.find("SLURM_ARRAY_TASK_ID=5"), std::string::npos) << s->source;
  // Without MAX (older Slurm): the same.
  const auto no_max = slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_ID", "5"},
                                                     {"SLURM_ARRAY_TASK_COUNT", "8"},
                                                     {"SLURM_ARRAY_TASK_MIN", "2"}}));
  ASSERT_TRUE(no_max.has_value());
  EXPECT_EQ(no_max->index, 3);
  EXPECT_EQ(no_max->count, 8);
}

TEST(WorkShard, SlurmArrayWithAStep) {
  // --array=0-14:2: tasks 0, 2, ..., 14, eight of them; task ID is shard ID/2.
  for (int id = 0; id <= 14; id += 2) {
    SCOPED_TRACE(id);
    const auto s = slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_ID", std::to_string(id)},
                                                  {"SLURM_ARRAY_TASK_COUNT", "8"},
                                                  {"SLURM_ARRAY_TASK_MIN", "0"},
                                                  {"SLURM_ARRAY_TASK_MAX", "14"},
                                                  {"SLURM_ARRAY_TASK_STEP", "2"}}));
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->index, id / 2);
    EXPECT_EQ(s->count, 8);
  }
}

TEST(WorkShard, SparseSlurmArrayIsRefusedAskingForShard) {
  // --array=1,5,9: three tasks from 1 to 9, not a contiguous range.
  const std::string message = ws_refusal([] {
    slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_ID", "5"},
                                   {"SLURM_ARRAY_TASK_COUNT", "3"},
                                   {"SLURM_ARRAY_TASK_MIN", "1"},
                                   {"SLURM_ARRAY_TASK_MAX", "9"}}));
  });
  EXPECT_NE(message.find("--shard"), std::string::npos) << message;
  EXPECT_NE(message.find("contiguous"), std::string::npos) << message;
  EXPECT_NE(message.find("SLURM_ARRAY_TASK_ID=5"), std::string::npos) << message;
}

TEST(WorkShard, IncompleteOrNonNumericSlurmVariablesAreRefused) {
  const std::string no_count = ws_refusal([] {
    slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_MIN", "0"}}));
  });
  EXPECT_NE(no_count.find("SLURM_ARRAY_TASK_COUNT"), std::string::npos) << no_count;
  EXPECT_NE(no_count.find("--shard"), std::string::npos) << no_count;
  const std::string no_min = ws_refusal([] {
    slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_ID", "1"}, {"SLURM_ARRAY_TASK_COUNT", "2"}}));
  });
  EXPECT_NE(no_min.find("SLURM_ARRAY_TASK_MIN"), std::string::npos) << no_min;
  for (const auto& [name, value] :
       std::vector<std::pair<std::string, std::string>>{{"SLURM_ARRAY_TASK_ID", "one"},
                                                        {"SLURM_ARRAY_TASK_ID", "-1"},
                                                        {"SLURM_ARRAY_TASK_ID", ""},
                                                        {"SLURM_ARRAY_TASK_COUNT", "2x"},
                                                        {"SLURM_ARRAY_TASK_MIN", "0.5"},
                                                        {"SLURM_ARRAY_TASK_STEP", "two"}}) {
    SCOPED_TRACE(name + "='" + value + "'");
    std::map<std::string, std::string> vars{{"SLURM_ARRAY_TASK_ID", "1"},
                                            {"SLURM_ARRAY_TASK_COUNT", "2"},
                                            {"SLURM_ARRAY_TASK_MIN", "0"}};
    vars[name] = value;
    const std::string message = ws_refusal([&] { slurm_array_shard(ws_fake_env(vars)); });
    EXPECT_NE(message.find(name + "='" + value + "'"), std::string::npos) << message;
  }
  // A task outside its own array's range.
  ws_refusal([] {
    slurm_array_shard(ws_fake_env({{"SLURM_ARRAY_TASK_ID", "0"},
                                   {"SLURM_ARRAY_TASK_COUNT", "2"},
                                   {"SLURM_ARRAY_TASK_MIN", "1"}}));
  });
}

TEST(WorkShard, RangesCoverTheListOnceInContiguousBalancedParts) {
  for (int64_t total = 0; total <= 200; ++total)
    for (int64_t count = 1; count <= 40; ++count) {
      SCOPED_TRACE(std::to_string(total) + " items in " + std::to_string(count) + " shards");
      int64_t next = 0, smallest = total, largest = 0;
      for (int64_t i = 0; i < count; ++i) {
        const ShardRange r = shard_range(total, WorkShard{i, count, "--shard"});
        ASSERT_EQ(r.begin, next) << "shard " << i;  // contiguous, in order, no overlap
        ASSERT_LE(r.begin, r.end) << "shard " << i;
        smallest = std::min(smallest, r.end - r.begin);
        largest = std::max(largest, r.end - r.begin);
        next = r.end;
      }
      ASSERT_EQ(next, total);  // every item, exactly once
      ASSERT_LE(largest - smallest, 1);
      // Balanced: each shard holds floor or ceil of total / count.
      ASSERT_EQ(smallest, total / count);
    }
}

TEST(WorkShard, ListHashTellsListsApart) {
  const std::vector<std::string> a{"x.png", "y.png", "z.png"};
  EXPECT_EQ(work_list_hash(a), work_list_hash(std::vector<std::string>(a)));
  EXPECT_EQ(work_list_hash(a).size(), 64u);                                   // SHA-256, hex
  EXPECT_NE(work_list_hash(a), work_list_hash({"y.png", "x.png", "z.png"}));  // order matters
  EXPECT_NE(work_list_hash({"ab", "c"}), work_list_hash({"a", "bc"}));        // items are delimited
  EXPECT_NE(work_list_hash({"ab"}), work_list_hash({"ab", ""}));
  EXPECT_NE(work_list_hash({}), work_list_hash({""}));
  EXPECT_NE(work_list_hash(a), work_list_hash({"x.png", "y.png"}));
}
