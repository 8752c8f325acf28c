// Reading and checking the shards of a run.
#include "app/cli/shard_merge.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <stdexcept>

#include "app/cli/shard_run.h"
#include "core/analysis/exact_table_json.h"

namespace attnlab::cli {
namespace {

nlohmann::json read_manifest(const std::string& dir) {
  const std::string path = dir + "/" + kShardManifest;
  if (!std::filesystem::is_directory(dir)) throw std::runtime_error(dir + " is no folder");
  std::ifstream in(path);
  if (!in)
    throw std::runtime_error(dir + " has no " + kShardManifest +
                             ": that shard did not finish (re-run it alone with the same options "
                             "and its --shard I/N, then merge again)");
  try {
    nlohmann::json m = nlohmann::json::parse(in);
    if (!m.is_object() || m.value("attnlab_shard", 0) != 1)
      throw std::runtime_error(path + " is not an attnlab shard manifest (format 1)");
    for (const char* key : {"command", "options", "list", "shard"})
      if (!m.contains(key)) throw std::runtime_error(path + " has no '" + key + "'");
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw std::runtime_error(path + ": not readable JSON (" + std::string(e.what()) + ")");
  }
}

// "its options differ from the 3rd word: --analyses rank, not --analyses entropy", or the
// whole values for the other keys.
std::string difference(const std::string& key, const nlohmann::json& a, const nlohmann::json& b) {
  if (key == "options" && a.is_array() && b.is_array()) {
    size_t i = 0;
    while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
    const auto words = [&](const nlohmann::json& o) {
      std::string text;
      const size_t from =
          i > 0 && o.size() > i - 1 && o[i - 1].get<std::string>().rfind("--", 0) == 0 ? i - 1 : i;
      for (size_t k = from; k < std::min(o.size(), i + 2); ++k)
        text += (text.empty() ? "" : " ") + o[k].get<std::string>();
      return text.empty() ? std::string("(nothing)") : text;
    };
    return "its options differ at word " + std::to_string(i + 1) + ": " + words(a) + ", not " +
           words(b);
  }
  return "its " + key + " is " + a.dump() + ", not " + b.dump();
}

std::string range_text(int64_t begin, int64_t end) {
  return end - begin == 1 ? "item " + std::to_string(begin)
                          : "items " + std::to_string(begin) + "-" + std::to_string(end - 1);
}

}  // namespace

std::vector<ShardPart> read_shards(const std::vector<std::string>& dirs) {
  if (dirs.empty()) throw std::runtime_error("merge needs the shards' folders");
  std::vector<ShardPart> parts;
  for (const auto& d : dirs) {
    ShardPart p;
    p.dir = d;
    p.manifest = read_manifest(d);
    const auto& s = p.manifest["shard"];
    p.index = s.at("index").get<int64_t>();
    p.begin = s.at("begin").get<int64_t>();
    p.end = s.at("end").get<int64_t>();
    parts.push_back(std::move(p));
  }
  // One run: everything but the folder and the shard's own place must agree.
  const nlohmann::json& first = parts.front().manifest;
  const int64_t count = first["shard"].at("count").get<int64_t>();
  for (const auto& p : parts) {
    const nlohmann::json& m = p.manifest;
    for (const char* key :
         {"command", "options", "attnlab_version", "attnlab_revision", "device", "dtype", "list"})
      if (m.value(key, nlohmann::json()) != first.value(key, nlohmann::json()))
        throw std::runtime_error(
            p.dir + " is not a shard of the same run as " + parts.front().dir + ": " +
            difference(key, m.value(key, nlohmann::json()), first.value(key, nlohmann::json())));
    if (m["shard"].at("count").get<int64_t>() != count)
      throw std::runtime_error(p.dir + " is shard " + std::to_string(p.index) + " of " +
                               m["shard"]["count"].dump() + ", " + parts.front().dir + " of " +
                               std::to_string(count));
  }
  // Every shard exactly once.
  std::map<int64_t, const ShardPart*> by_index;
  for (const auto& p : parts) {
    if (p.index < 0 || p.index >= count)
      throw std::runtime_error(p.dir + ": shard index " + std::to_string(p.index) + " of " +
                               std::to_string(count));
    auto [it, fresh] = by_index.emplace(p.index, &p);
    if (!fresh)
      throw std::runtime_error("shard " + std::to_string(p.index) + "/" + std::to_string(count) +
                               " is given twice: " + it->second->dir + " and " + p.dir);
  }
  const int64_t total = first["list"].at("size").get<int64_t>();
  const int64_t unit = std::max<int64_t>(1, first["shard"].value("unit", int64_t{1}));
  std::string missing;
  for (int64_t i = 0; i < count; ++i)
    if (!by_index.count(i)) {
      const analysis::ShardRange u =
          analysis::shard_range((total + unit - 1) / unit, {i, count, "merge"});
      const analysis::ShardRange r{std::min(total, u.begin * unit), std::min(total, u.end * unit)};
      missing += (missing.empty() ? "" : ", ") + std::to_string(i) + "/" + std::to_string(count) +
                 " (" + range_text(r.begin, r.end) + ")";
    }
  if (!missing.empty())
    throw std::runtime_error("the shards do not cover the " + first["list"].value("kind", "list") +
                             ": missing shard " + missing + " of " + std::to_string(total) +
                             " items; run them and merge again");
  std::vector<ShardPart> ordered;
  int64_t next = 0;
  for (const auto& [i, p] : by_index) {
    if (p->begin != next)
      throw std::runtime_error(p->dir + " holds " + range_text(p->begin, p->end) +
                               ", but the shards before it end at item " + std::to_string(next));
    next = p->end;
    ordered.push_back(*p);
  }
  if (next != total)
    throw std::runtime_error("the shards hold " + std::to_string(next) + " of the " +
                             std::to_string(total) + " items");
  return ordered;
}

std::vector<analysis::Table> concatenated_tables(
    const std::vector<std::pair<std::string, nlohmann::json>>& shard_tables) {
  std::vector<analysis::Table> tables;
  for (const auto& [dir, list] : shard_tables)
    for (const auto& j : list) {
      analysis::Table t;
      try {
        t = analysis::table_from_exact_json(j);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(dir + ": " + e.what());
      }
      auto same = std::find_if(tables.begin(), tables.end(),
                               [&](const analysis::Table& x) { return x.name == t.name; });
      if (same == tables.end()) {
        tables.push_back(std::move(t));
        continue;
      }
      if (same->columns != t.columns)
        throw std::runtime_error(dir + ": the table " + t.name + " has other columns");
      for (auto& row : t.rows) same->rows.push_back(std::move(row));
    }
  return tables;
}

nlohmann::json merge_record(const std::vector<ShardPart>& shards) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& p : shards) {
    const auto& s = p.manifest["shard"];
    list.push_back({{"folder", std::filesystem::absolute(p.dir).lexically_normal().string()},
                    {"index", p.index},
                    {"begin", p.begin},
                    {"end", p.end},
                    {"source", s.value("source", "")},
                    {"command_line", p.manifest.value("command_line", nlohmann::json())}});
  }
  const auto& m = shards.front().manifest;
  return {{"command", m["command"]},
          {"options", m["options"]},
          {"attnlab_version", m.value("attnlab_version", "")},
          {"attnlab_revision", m.value("attnlab_revision", "")},
          {"list", m["list"]},
          {"shard_count", shards.size()},
          {"shards", list}};
}

}  // namespace attnlab::cli
