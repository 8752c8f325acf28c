// Each shardable command's merge (cmd_merge.cpp dispatches on the manifests' command): the
// shards in order, the output folder, and the record of the shards for the sidecar.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

#include "app/cli/shard_merge.h"

namespace attnlab::cli {

int merge_analyze(const std::vector<ShardPart>& shards, const std::string& out,
                  const nlohmann::json& record);

int merge_faithfulness(const std::vector<ShardPart>& shards, const std::string& out,
                       const nlohmann::json& record);

// The CSV a sharded classify writes in its folder, and merge beside merge.json.
inline constexpr const char* kClassifyCsv = "predictions.csv";
int merge_classify(const std::vector<ShardPart>& shards, const std::string& out,
                   const nlohmann::json& record);
int merge_eval(const std::vector<ShardPart>& shards, const std::string& out,
               const nlohmann::json& record);

int merge_embed(const std::vector<ShardPart>& shards, const std::string& out,
                const nlohmann::json& record);

int merge_head_importance(const std::vector<ShardPart>& shards, const std::string& out,
                          const nlohmann::json& record);

int merge_analyze_sizes(const std::vector<ShardPart>& shards, const std::string& out,
                        const nlohmann::json& record);

int merge_analyze_series(const std::vector<ShardPart>& shards, const std::string& out,
                         const nlohmann::json& record);

int merge_report(const std::vector<ShardPart>& shards, const std::string& out,
                 const nlohmann::json& record);

}  // namespace attnlab::cli
