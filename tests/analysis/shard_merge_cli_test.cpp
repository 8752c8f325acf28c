// Issue 50 end to end on the shipped zoo, without Slurm: each shardable command run once
// whole and again as --shard I/N (N = 3, and 2 for some), then `attnlab merge` of the
// shards: the merged folder holds exactly the single run's files (and merge.json), each
// byte-identical but for what is a run's own record (the settings sidecars, index.html),
// cairo's creation dates and per-process ids (PDFs and SVGs), the seconds of a size
// sweep, and the mean/std tables' statistics, which the merge combines from the shards'
// running states and so equal the single run's up to rounding (1e-12 relative in JSON, the
// last of 9 digits in CSV; shard_cli_table_difference); eval's merge prints the single
// run's line. Then the refusals: an unfinished, missing or repeated shard, shards of
// another run, merge's usage errors, a bad --shard; a merge's exit status after an
// unreadable image; and a Slurm array task's environment without Slurm
// (tests/cluster/slurm_array_test.sh runs analyze and faithfulness through a real array). Every run
// uses --threads 1 (the merge too: feature PCA's fit at the merge follows its own thread count) and
// none sees the SLURM_ARRAY_* variables of the process that runs the tests.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "core/data/image_dataset.h"
#include "tests/support/cli_runner.h"
#include "tests/support/sample_tree.h"
#include "tests/support/temp_path.h"
#include "tests/support/text_file.h"

namespace {

namespace fs = std::filesystem;
using attnlab::testing::CliRun;
using attnlab::testing::copy_sample_tree;
using attnlab::testing::read_text;
using attnlab::testing::run_cli_single;
using attnlab::testing::TempDir;

const std::string kShardCliRoot = ATTNLAB_SOURCE_DIR;
const std::string kShardCliZoo = kShardCliRoot + "/models/zoo";
const std::string kShardCliSoftmax = kShardCliZoo + "/softmax.safetensors";
const std::string kShardCliSamples = kShardCliRoot + "/assets/fashion-mnist";

// The first `n` committed samples, one per class first (00-..., 01-..., in name order).
std::string shard_cli_images(size_t n) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(kShardCliSamples))
    if (e.path().extension() == ".png") names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  std::vector<std::string> firsts;  // one per class prefix "NN-"
  std::set<std::string> seen;
  for (const auto& name : names)
    if (seen.insert(name.substr(0, 3)).second) firsts.push_back(name);
  for (const auto& name : names)
    if (std::find(firsts.begin(), firsts.end(), name) == firsts.end()) firsts.push_back(name);
  std::string list;
  for (size_t i = 0; i < n && i < firsts.size(); ++i)
    list += " " + kShardCliSamples + "/" + firsts[i];
  return list;
}

struct ShardCliSharded {
  std::vector<std::string> dirs;  // the shards' folders
  std::vector<int> codes;         // their exit codes
  CliRun merge;
  std::string merged;  // merge's --out
};

// `args --shard I/N --out DIR/shard_I` for every I, then `merge DIR/shard_* --out DIR/merged`.
ShardCliSharded shard_cli_sharded(const std::string& args, int n, const fs::path& dir) {
  ShardCliSharded s;
  std::string folders;
  for (int i = 0; i < n; ++i) {
    const std::string d = (dir / ("shard_" + std::to_string(i))).string();
    const CliRun r = run_cli_single(args + " --shard " + std::to_string(i) + "/" +
                                    std::to_string(n) + " --out " + d);
    s.dirs.push_back(d);
    s.codes.push_back(r.code);
    if (r.code != 0)
      std::fprintf(stderr, "shard %d/%d exited %d:\n%s\n", i, n, r.code, r.out.c_str());
    folders += " " + d;
  }
  s.merged = (dir / "merged").string();
  s.merge = run_cli_single("merge" + folders + " --out " + s.merged);
  return s;
}

void shard_cli_expect_ok(const ShardCliSharded& s) {
  for (size_t i = 0; i < s.codes.size(); ++i) {
    EXPECT_EQ(s.codes[i], 0) << "shard " << i;
    EXPECT_TRUE(fs::exists(s.dirs[i] + "/shard.json")) << s.dirs[i];
  }
  EXPECT_EQ(s.merge.code, 0) << s.merge.out;
}

// Files under `root`, as relative paths, sorted.
std::vector<std::string> shard_cli_files(const fs::path& root) {
  std::vector<std::string> files;
  if (!fs::is_directory(root)) return files;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), root).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

bool shard_cli_ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// A PDF without its /CreationDate (...) entries (cairo writes the time).
std::string shard_cli_without_creation_date(std::string pdf) {
  const std::string key = "/CreationDate (";
  for (size_t at = pdf.find(key); at != std::string::npos; at = pdf.find(key, at)) {
    const size_t close = pdf.find(')', at + key.size());
    if (close == std::string::npos) break;
    pdf.erase(at, close + 1 - at);
  }
  return pdf;
}

// An SVG with cairo's per-process ids left out: what the regex
// \b(surface|image|glyph|clip|pattern|mask|source)[0-9-]+ -> the word does.
std::string shard_cli_without_cairo_ids(const std::string& svg) {
  static const char* const kWords[] = {"surface", "image", "glyph", "clip",
                                       "pattern", "mask",  "source"};
  const auto word_char = [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  };
  const auto id_char = [](char c) { return (c >= '0' && c <= '9') || c == '-'; };
  std::string out;
  out.reserve(svg.size());
  size_t i = 0;
  while (i < svg.size()) {
    bool replaced = false;
    if (i == 0 || !word_char(svg[i - 1])) {
      for (const char* w : kWords) {
        const size_t n = std::strlen(w);
        if (svg.compare(i, n, w) == 0 && i + n < svg.size() && id_char(svg[i + n])) {
          out += w;
          i += n;
          while (i < svg.size() && id_char(svg[i])) ++i;
          replaced = true;
          break;
        }
      }
    }
    if (!replaced) out += svg[i++];
  }
  return out;
}

std::vector<std::string> shard_cli_split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(s);
  while (std::getline(in, part, sep)) {
    if (!part.empty() && part.back() == '\r') part.pop_back();
    parts.push_back(part);
  }
  return parts;
}

// A table as cell texts: a CSV's fields (a quoted one marked with a leading '"', so that
// the text "1" is not the number 1), or an attnlab table JSON's cells (their dump()) and its
// other keys (name, caption, key_columns).
struct ShardCliTable {
  nlohmann::json meta = nlohmann::json::object();
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

ShardCliTable shard_cli_read_csv(const std::string& text) {
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> record;
  std::string field;
  bool quoted = false, pending = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = pending = true;
      field += '"';  // the marker
    } else if (c == ',') {
      record.push_back(field);
      field.clear();
      pending = true;
    } else if (c == '\r' || c == '\n') {
      if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
      record.push_back(field);
      records.push_back(record);
      field.clear();
      record.clear();
      pending = false;
    } else {
      field += c;
      pending = true;
    }
  }
  if (pending) {
    record.push_back(field);
    records.push_back(record);
  }
  ShardCliTable t;
  if (records.empty()) return t;
  t.columns = records.front();
  t.rows.assign(records.begin() + 1, records.end());
  return t;
}

// nullopt-like: false when `text` is not a whole JSON table.
bool shard_cli_read_json_table(const std::string& text, ShardCliTable& t) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object() || !j.contains("columns") || !j.contains("rows") || !j["columns"].is_array() ||
      !j["rows"].is_array())
    return false;
  for (const auto& c : j["columns"])
    t.columns.push_back(c.is_string() ? c.get<std::string>() : c.dump());
  for (const auto& r : j["rows"]) {
    std::vector<std::string> row;
    for (const auto& c : r) row.push_back(c.dump());
    t.rows.push_back(row);
  }
  t.meta = j;
  t.meta.erase("rows");
  return true;
}

bool shard_cli_number(const std::string& text, double& value) {
  if (text.empty() || text[0] == '"') return false;
  char* end = nullptr;
  value = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

// Where a merge may differ from the single run: attnlab merges the shards' running means and
// squared deviations (Chan, Golub and LeVeque; core/analysis/table.h), which rounds
// differently from one running mean over every image, so a "<name>_mean" or "<name>_std"
// cell is its single-run value up to rounding. It is asked to be within `rtol` relative,
// on the scale of its row's partner too (a mean's std, a std's mean): a mean that is 0 but
// for rounding (an accuracy drop of 0 in most images: -3e-18 or 1e-17) and the std of a
// constant are noise on that scale, nothing more. Every other cell (keys, image counts,
// any other value) is the same text. `ignore`: a column left out (the seconds of a size
// sweep's timing table). Returns the first difference ("" when none).
std::string shard_cli_table_difference(const ShardCliTable& a, const ShardCliTable& b, double rtol,
                                       const std::string& ignore) {
  if (a.meta != b.meta) return "the table's name, caption or keys differ";
  if (a.columns != b.columns) return "the columns differ";
  if (a.rows.size() != b.rows.size())
    return std::to_string(a.rows.size()) + " vs " + std::to_string(b.rows.size()) + " rows";
  const auto ends = [](const std::string& s, const char* tail) {
    return shard_cli_ends_with(s, tail);
  };
  const auto partner = [&](size_t c) -> size_t {
    const std::string& name = a.columns[c];
    std::string other;
    if (ends(name, "_mean")) other = name.substr(0, name.size() - 5) + "_std";
    if (ends(name, "_std")) other = name.substr(0, name.size() - 4) + "_mean";
    const auto it = std::find(a.columns.begin(), a.columns.end(), other);
    return other.empty() || it == a.columns.end() ? a.columns.size()
                                                  : size_t(it - a.columns.begin());
  };
  for (size_t r = 0; r < a.rows.size(); ++r) {
    const auto& x = a.rows[r];
    const auto& y = b.rows[r];
    if (x.size() != y.size()) return "row " + std::to_string(r) + ": the widths differ";
    for (size_t c = 0; c < x.size() && c < a.columns.size(); ++c) {
      if (x[c] == y[c] || a.columns[c] == ignore) continue;
      const std::string where =
          "row " + std::to_string(r) + " " + a.columns[c] + ": " + x[c] + " vs " + y[c];
      const bool statistic = ends(a.columns[c], "_mean") || ends(a.columns[c], "_std");
      double u = 0, v = 0;
      if (!statistic || !shard_cli_number(x[c], u) || !shard_cli_number(y[c], v) ||
          !std::isfinite(u) || !std::isfinite(v))
        return where;
      double scale = std::max(std::fabs(u), std::fabs(v));
      const size_t p = partner(c);
      double pu = 0, pv = 0;
      if (p < x.size() && shard_cli_number(x[p], pu) && shard_cli_number(y[p], pv) &&
          std::isfinite(pu) && std::isfinite(pv))
        scale = std::max({scale, std::fabs(pu), std::fabs(pv)});
      if (std::fabs(u - v) > rtol * scale) {
        std::ostringstream m;
        m << where << " (beyond " << rtol << " of " << scale << ")";
        return m.str();
      }
    }
  }
  return {};
}

// Byte offset of the first difference of two texts (their common length when one is a
// prefix of the other).
size_t shard_cli_first_difference(const std::string& a, const std::string& b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// The merged folder holds the single run's files and merge.json, nothing else (no
// shard.json, no shard_state/), each file the same as the single run's: settings
// sidecars and index.html (the run's own records: times, merged_from) only present;
// PDFs without their creation date; SVGs without cairo's ids; the size sweep's table
// without its seconds. Returns the number of files compared by content.
// A LaTeX table prints 3 decimals: two statistics within 1e-12 of each other can print one
// unit of the third decimal apart when they straddle a rounding boundary (0.8125 against
// 0.81249999999). Words must match, numbers within 0.001 (plus the printing's own slack).
std::string shard_cli_latex_difference(const std::string& a, const std::string& b) {
  std::istringstream ia(a), ib(b);
  std::string u, v;
  while (true) {
    const bool more_a = bool(ia >> u), more_b = bool(ib >> v);
    if (more_a != more_b) return "another number of words";
    if (!more_a) return "";
    if (u == v) continue;
    double x = 0, y = 0;
    if (!shard_cli_number(u, x) || !shard_cli_number(v, y)) return "'" + u + "' vs '" + v + "'";
    if (std::fabs(x - y) > 1.0001e-3) return u + " vs " + v + ", beyond the last decimal";
  }
}

size_t shard_cli_expect_same_files(const std::string& single, const std::string& merged) {
  const std::vector<std::string> single_files = shard_cli_files(single);
  std::vector<std::string> expected = single_files;
  expected.push_back("merge.json");
  std::sort(expected.begin(), expected.end());
  EXPECT_FALSE(single_files.empty()) << single;
  EXPECT_EQ(shard_cli_files(merged), expected) << single << " vs " << merged;
  size_t compared = 0;
  for (const std::string& rel : single_files) {
    const std::string name = fs::path(rel).filename().string();
    if ((name.find("settings") != std::string::npos && shard_cli_ends_with(name, ".json")) ||
        name == "index.html")
      continue;
    const std::string a = read_text(single + "/" + rel);
    const std::string b = read_text(merged + "/" + rel);
    if (!fs::exists(merged + "/" + rel)) continue;  // reported above
    ++compared;
    if (a == b) continue;
    std::string problem;
    ShardCliTable ta, tb;
    const bool sweep_times =
        shard_cli_ends_with(name, "__sizes.csv") || shard_cli_ends_with(name, "__sizes.json");
    if (shard_cli_ends_with(name, ".pdf")) {
      if (shard_cli_without_creation_date(a) != shard_cli_without_creation_date(b))
        problem = "differs beyond its /CreationDate";
    } else if (shard_cli_ends_with(name, ".svg")) {
      if (shard_cli_without_cairo_ids(a) != shard_cli_without_cairo_ids(b))
        problem = "differs beyond cairo's ids";
    } else if (shard_cli_ends_with(name, ".csv")) {
      // 9 significant digits: values within 1e-12 can print one unit apart in the last.
      problem = shard_cli_table_difference(shard_cli_read_csv(a), shard_cli_read_csv(b), 1e-8,
                                           sweep_times ? "seconds_per_image" : "");
    } else if (shard_cli_ends_with(name, ".tex")) {
      problem = shard_cli_latex_difference(a, b);
    } else if (shard_cli_ends_with(name, ".json") && shard_cli_read_json_table(a, ta) &&
               shard_cli_read_json_table(b, tb)) {
      problem = shard_cli_table_difference(ta, tb, 1e-12, sweep_times ? "seconds_per_image" : "");
    } else {
      problem = "not byte-identical";
    }
    if (sweep_times) {
      const ShardCliTable t = shard_cli_ends_with(name, ".csv") ? shard_cli_read_csv(a) : ta;
      EXPECT_TRUE(std::find(t.columns.begin(), t.columns.end(), "seconds_per_image") !=
                  t.columns.end())
          << rel << ": no seconds_per_image column (what the comparison leaves out)";
    }
    if (!problem.empty())
      ADD_FAILURE() << rel << " differs from the single run's: " << problem << " (sizes "
                    << a.size() << " and " << b.size() << ", first byte difference at "
                    << shard_cli_first_difference(a, b) << ")";
  }
  return compared;
}

// The line of `out` that starts with `prefix` ("" when none does).
std::string shard_cli_line(const std::string& out, const std::string& prefix) {
  for (const std::string& line : shard_cli_split(out, '\n'))
    if (line.rfind(prefix, 0) == 0) return line;
  return {};
}

bool shard_cli_has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

nlohmann::json shard_cli_json(const std::string& path) {
  const std::string text = read_text(path);
  if (text.empty()) {
    ADD_FAILURE() << path << " is missing or empty";
    return nlohmann::json::object();
  }
  return nlohmann::json::parse(text);
}

}  // namespace

// The comparison itself: what it forgives and what it does not.
TEST(ShardMergeCompare, ForgivesOnlyIdsDatesSecondsAndRounding) {
  EXPECT_EQ(shard_cli_without_cairo_ids("<g id=\"surface12\"><use xlink:href=\"#glyph0-3\"/>"
                                        "<clipPath id=\"clip-7\"> image5 mask2 pattern1 source9"),
            "<g id=\"surface\"><use xlink:href=\"#glyph\"/><clipPath id=\"clip\"> image mask "
            "pattern source");
  EXPECT_EQ(shard_cli_without_cairo_ids("eclipse3 subsurface4 image x9 glyph"),
            "eclipse3 subsurface4 image x9 glyph");
  EXPECT_EQ(shard_cli_without_creation_date("<< /CreationDate (D:20261127) /Producer (cairo) >>"),
            "<<  /Producer (cairo) >>");
  const ShardCliTable csv = shard_cli_read_csv(
      "layer,\"path, "
      "quoted\",x_mean,x_std,images\r\n0,\"a,\"\"b\"\"\",-3.12250226e-18,0.316227766,60\r\n");
  ASSERT_EQ(csv.columns.size(), 5u);
  ASSERT_EQ(csv.rows.size(), 1u);
  EXPECT_EQ(csv.rows[0][1], "\"a,\"b\"");  // quoted: marked
  ShardCliTable other = csv;
  other.rows[0][2] = "1.38777878e-17";  // a zero mean's rounding noise beside its std
  EXPECT_EQ(shard_cli_table_difference(csv, other, 1e-12, ""), "");
  other.rows[0][2] = "1e-9";  // not noise
  EXPECT_NE(shard_cli_table_difference(csv, other, 1e-12, ""), "");
  other = csv;
  other.rows[0][3] = "0.316227767";  // the std's last printed digit
  EXPECT_EQ(shard_cli_table_difference(csv, other, 1e-8, ""), "");
  EXPECT_NE(shard_cli_table_difference(csv, other, 1e-12, ""), "");
  other = csv;
  other.rows[0][4] = "59";  // a count is exact
  EXPECT_NE(shard_cli_table_difference(csv, other, 1e-8, ""), "");
  EXPECT_EQ(shard_cli_table_difference(csv, other, 1e-8, "images"), "");  // unless left out
  other = csv;
  other.rows[0][1] = "\"a,\"b";  // text is exact
  EXPECT_NE(shard_cli_table_difference(csv, other, 1e-8, ""), "");
  ShardCliTable a, b;
  ASSERT_TRUE(shard_cli_read_json_table(
      R"({"name": "t", "columns": ["k", "v_mean", "v_std"], "key_columns": 1,
          "rows": [[1, 2.5, 0.5], ["x", null, null]]})",
      a));
  ASSERT_TRUE(shard_cli_read_json_table(
      R"({"name": "t", "columns": ["k", "v_mean", "v_std"], "key_columns": 1,
          "rows": [[1, 2.5000000000000004, 0.5], ["x", null, null]]})",
      b));
  EXPECT_EQ(shard_cli_table_difference(a, b, 1e-12, ""), "");
  ASSERT_TRUE(shard_cli_read_json_table(
      R"({"name": "t", "columns": ["k", "v_mean", "v_std"], "key_columns": 1,
          "rows": [[1.0, 2.5, 0.5], ["x", null, null]]})",
      b));
  EXPECT_NE(shard_cli_table_difference(a, b, 1e-12, ""), "");  // an Int key is no Real
  EXPECT_FALSE(shard_cli_read_json_table(R"({"files": []})", b));
}

// ---------------------------------------------------------------------------------------
// classify: the shards' CSVs joined under one header are the single run's CSV.

TEST(ShardMergeClassify, MergedCsvIsTheSingleRunsForThreeAndTwoShards) {
  TempDir dir("classify");
  const std::string args = "classify --model " + kShardCliSoftmax + shard_cli_images(7);
  fs::create_directories(dir.path / "single");
  const CliRun single = run_cli_single(args + " --out " + dir.file("single/predictions.csv"));
  ASSERT_EQ(single.code, 0) << single.out;
  for (const int n : {3, 2}) {
    SCOPED_TRACE(std::to_string(n) + " shards");
    const ShardCliSharded s = shard_cli_sharded(args, n, dir.path / ("n" + std::to_string(n)));
    shard_cli_expect_ok(s);
    EXPECT_TRUE(shard_cli_has(s.merge.out, "35 prediction row(s) of " + std::to_string(n)))
        << s.merge.out;
    EXPECT_EQ(shard_cli_expect_same_files(dir.file("single"), s.merged), 1u);
    // Each shard's folder: its part of the CSV and its manifest.
    const nlohmann::json m = shard_cli_json(s.dirs[1] + "/shard.json");
    EXPECT_EQ(m.at("command"), "classify");
    EXPECT_EQ(m.at("shard").at("index"), 1);
    EXPECT_EQ(m.at("shard").at("count"), n);
    EXPECT_EQ(m.at("list").at("size"), 7);
    const nlohmann::json record = shard_cli_json(s.merged + "/merge.json");
    EXPECT_EQ(record.at("shard_count"), n);
    EXPECT_EQ(record.at("shards").size(), size_t(n));
  }
}

TEST(ShardMergeClassify, ShardFromASlurmArrayTasksEnvironment) {
  TempDir dir("slurm_env");
  const std::string args = "classify --model " + kShardCliSoftmax + shard_cli_images(4);
  const std::string slurm =
      "SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=0 ";
  const CliRun r = run_cli_single(args + " --out " + dir.file("task1"), slurm);
  ASSERT_EQ(r.code, 0) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, "shard 1/2 from Slurm")) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, "SLURM_ARRAY_TASK_ID=1")) << r.out;
  const nlohmann::json m = shard_cli_json(dir.file("task1/shard.json"));
  EXPECT_EQ(m.at("shard").at("index"), 1);
  EXPECT_EQ(m.at("shard").at("count"), 2);
  EXPECT_EQ(m.at("shard").at("begin"), 2);
  EXPECT_EQ(m.at("shard").at("end"), 4);
  EXPECT_TRUE(
      shard_cli_has(m.at("shard").at("source").get<std::string>(), "SLURM_ARRAY_TASK_ID=1"));
  // Task 0 of the same array: the two tasks merge into the single run's CSV.
  const CliRun t0 =
      run_cli_single(args + " --out " + dir.file("task0"),
                     "SLURM_ARRAY_TASK_ID=0 SLURM_ARRAY_TASK_COUNT=2 SLURM_ARRAY_TASK_MIN=0 ");
  ASSERT_EQ(t0.code, 0) << t0.out;
  fs::create_directories(dir.path / "single");
  ASSERT_EQ(run_cli_single(args + " --out " + dir.file("single/predictions.csv")).code, 0);
  const CliRun merge = run_cli_single("merge " + dir.file("task0") + " " + dir.file("task1") +
                                      " --out " + dir.file("merged"));
  ASSERT_EQ(merge.code, 0) << merge.out;
  shard_cli_expect_same_files(dir.file("single"), dir.file("merged"));
  // --shard wins over the environment: said nowhere to come from Slurm.
  const CliRun given = run_cli_single(args + " --shard 0/2 --out " + dir.file("given"), slurm);
  ASSERT_EQ(given.code, 0) << given.out;
  EXPECT_FALSE(shard_cli_has(given.out, "from Slurm")) << given.out;
  EXPECT_EQ(shard_cli_json(dir.file("given/shard.json")).at("shard").at("index"), 0);
  // A sparse array (--array=1,5,9) is a usage error that asks for --shard.
  const CliRun sparse = run_cli_single(args + " --out " + dir.file("sparse"),
                                       "SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_COUNT=3 "
                                       "SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_MAX=9 ");
  EXPECT_EQ(sparse.code, 2) << sparse.out;
  EXPECT_TRUE(shard_cli_has(sparse.out, "--shard I/N")) << sparse.out;
  EXPECT_FALSE(fs::exists(dir.file("sparse/shard.json")));
}

// ---------------------------------------------------------------------------------------
// eval: merge prints the single run's accuracy line and writes eval.json.

TEST(ShardMergeEval, FolderOfTheDemoImages) {
  TempDir dir("eval_folder");
  copy_sample_tree(dir.path / "data");
  const std::string args =
      "eval --model " + kShardCliSoftmax + " --dataset folder:" + dir.file("data") + " --batch 4";
  const CliRun single = run_cli_single(args);
  ASSERT_EQ(single.code, 0) << single.out;
  const std::string line = shard_cli_line(single.out, "accuracy ");
  ASSERT_FALSE(line.empty()) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 3, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_EQ(shard_cli_line(s.merge.out, "accuracy "), line) << s.merge.out;
  const nlohmann::json e = shard_cli_json(s.merged + "/eval.json");
  EXPECT_EQ(e.at("total"), 30);
  EXPECT_TRUE(shard_cli_has(line, "(" + e.at("correct").dump() + "/30)")) << line;
  EXPECT_EQ(shard_cli_files(s.merged), (std::vector<std::string>{"eval.json", "merge.json"}));
}

TEST(ShardMergeEval, FashionMnistFirst600) {
  if (attnlab::data::fashion_mnist_dir().empty())
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir dir("eval_fmnist");
  const std::string args =
      "eval --model " + kShardCliSoftmax + " --dataset fashion-mnist:test --limit 600 --batch 100";
  const CliRun single = run_cli_single(args);
  ASSERT_EQ(single.code, 0) << single.out;
  const std::string line = shard_cli_line(single.out, "accuracy ");
  ASSERT_TRUE(shard_cli_has(line, "/600) on fashion-mnist:test (first 600 images)")) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 3, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_EQ(shard_cli_line(s.merge.out, "accuracy "), line) << s.merge.out;
  // Whole batches per shard: 600 images of batch 100 are 2 batches each.
  EXPECT_EQ(shard_cli_json(s.dirs[1] + "/shard.json").at("shard").at("begin"), 200);
  EXPECT_EQ(shard_cli_json(s.merged + "/eval.json").at("total"), 600);
}

// With --limit and an unreadable image among the first N, the single run says
// "(first N images, 1 unreadable skipped)": N is the images considered, readable or not.
// The merge must print the same line (and exit 1, as the single run does).
TEST(ShardMergeEval, UnreadableImageWithLimitPrintsTheSingleRunsLine) {
  TempDir dir("eval_unreadable");
  copy_sample_tree(dir.path / "data");
  {
    std::ofstream bad(dir.path / "data" / "00-t-shirt-top" / "00-unreadable.png");
    bad << "not a png";
  }
  const std::string args = "eval --model " + kShardCliSoftmax +
                           " --dataset folder:" + dir.file("data") + " --batch 4 --limit 8";
  const CliRun single = run_cli_single(args);
  EXPECT_EQ(single.code, 1) << single.out;
  const std::string line = shard_cli_line(single.out, "accuracy ");
  ASSERT_TRUE(shard_cli_has(line, "(first 8 images, 1 unreadable skipped)")) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 2, dir.path);
  EXPECT_EQ(s.merge.code, 1) << s.merge.out;
  EXPECT_EQ(shard_cli_line(s.merge.out, "accuracy "), line) << s.merge.out;
}

// ---------------------------------------------------------------------------------------
// head-importance, analyze-series, analyze-sizes: every file of the single run.

TEST(ShardMergeAnalysis, HeadImportanceOnFashionMnist) {
  if (attnlab::data::fashion_mnist_dir().empty())
    GTEST_SKIP() << "dataset-fashion-mnist is not installed";
  TempDir dir("head_importance");
  const std::string args = "head-importance --model " + kShardCliSoftmax +
                           " --dataset fashion-mnist:test --limit 60 --batch 8";
  const CliRun single = run_cli_single(args + " --out " + dir.file("single"));
  ASSERT_EQ(single.code, 0) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 3, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_GE(shard_cli_expect_same_files(dir.file("single"), s.merged), 6u);
  // Whole batches of 8: 60 images are 8 batches, 2 + 3 + 3 of them.
  EXPECT_EQ(shard_cli_json(s.dirs[1] + "/shard.json").at("shard").at("begin"), 16);
  EXPECT_EQ(shard_cli_json(s.dirs[2] + "/shard.json").at("shard").at("begin"), 40);
}

TEST(ShardMergeAnalysis, FaithfulnessWithoutPerImageTables) {
  TempDir dir("faithfulness_summary");
  const std::string args = "faithfulness --models " + kShardCliSoftmax + " " + kShardCliZoo +
                           "/hilo.safetensors --images" + shard_cli_images(6) +
                           " --maps rollout,random --step 0.25 --per-image off";
  const CliRun single = run_cli_single(args + " --out " + dir.file("single"));
  ASSERT_EQ(single.code, 0) << single.out;
  EXPECT_FALSE(fs::exists(dir.file("single") + "/faithfulness__faithfulness_images.csv"));
  const ShardCliSharded s = shard_cli_sharded(args, 3, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_GE(shard_cli_expect_same_files(dir.file("single"), s.merged), 10u);
  // A shard keeps running means, not its images' rows.
  const nlohmann::json m = shard_cli_json(s.dirs[1] + "/shard.json");
  EXPECT_TRUE(m.at("state").contains("curve_means"));
  EXPECT_TRUE(m.at("state").at("models").at(0).at("images").empty());
}

TEST(ShardMergeAnalysis, AnalyzeSeriesOfFourCheckpoints) {
  TempDir dir("series");
  const std::string c = kShardCliZoo + "/castling_series/step_000";
  const std::string args = "analyze-series --checkpoints " + c + "000.safetensors " + c +
                           "270.safetensors " + c + "540.safetensors " + c +
                           "937.safetensors --images" + shard_cli_images(2) +
                           " --analyses mask,rank,locality,cka";
  const CliRun single = run_cli_single(args + " --out " + dir.file("single"));
  ASSERT_EQ(single.code, 0) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 3, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_EQ(shard_cli_json(s.dirs[0] + "/shard.json").at("list").at("kind"), "checkpoints");
  EXPECT_GE(shard_cli_expect_same_files(dir.file("single"), s.merged), 14u);
  // CKA to the final checkpoint, which only the last shard holds.
  EXPECT_TRUE(fs::exists(s.merged + "/castling_series__cka_final_series.csv"));
}

TEST(ShardMergeAnalysis, AnalyzeSizesButTheSeconds) {
  TempDir dir("sizes");
  const std::string args = "analyze-sizes --model " + kShardCliSoftmax +
                           " --img-sizes 28,42 --images" + shard_cli_images(4);
  const CliRun single = run_cli_single(args + " --out " + dir.file("single"));
  ASSERT_EQ(single.code, 0) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 3, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_GE(shard_cli_expect_same_files(dir.file("single"), s.merged), 30u);
  EXPECT_TRUE(fs::exists(s.merged + "/softmax_sizes__sizes.csv"));
  EXPECT_TRUE(fs::exists(s.merged + "/softmax_sizes__entropy_sizes.pdf"));
}

// ---------------------------------------------------------------------------------------
// report: two models side by side, and one with a checkpoint series.

TEST(ShardMergeReport, TwoModelsSvgAndPng) {
  TempDir dir("report");
  const std::string args = "report --models " + kShardCliSoftmax + " " + kShardCliZoo +
                           "/linear.safetensors --images" + shard_cli_images(6) +
                           " --formats svg,png --figures head_maps,compare,rank,locality,cka";
  const CliRun single = run_cli_single(args + " --out " + dir.file("single"));
  ASSERT_EQ(single.code, 0) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 3, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_GE(shard_cli_expect_same_files(dir.file("single"), s.merged), 100u);
  EXPECT_TRUE(fs::exists(s.merged + "/index.html"));
  EXPECT_TRUE(fs::exists(s.merged + "/figures/cka__models.svg"));
  EXPECT_TRUE(fs::exists(s.merged + "/figures/compare__00-t-shirt-top-00019.png"));
}

TEST(ShardMergeReport, WithACheckpointSeriesInTwoShards) {
  TempDir dir("report_series");
  const std::string c = kShardCliZoo + "/castling_series/step_000";
  const std::string args = "report --models " + kShardCliZoo + "/castling.safetensors --series " +
                           c + "000.safetensors " + c + "450.safetensors " + c +
                           "937.safetensors --images" + shard_cli_images(4) +
                           " --formats svg,png --analyses mask,rank,locality"
                           " --figures castling_mask,rank,locality";
  const CliRun single = run_cli_single(args + " --out " + dir.file("single"));
  ASSERT_EQ(single.code, 0) << single.out;
  const ShardCliSharded s = shard_cli_sharded(args, 2, dir.path);
  shard_cli_expect_ok(s);
  EXPECT_GE(shard_cli_expect_same_files(dir.file("single"), s.merged), 30u);
  EXPECT_TRUE(fs::exists(s.merged + "/stats/castling_series__mask_heads_series.csv"));
  EXPECT_TRUE(fs::exists(s.merged + "/figures/castling_mask__castling_series.svg"));
}

// ---------------------------------------------------------------------------------------
// An unreadable image: the single run writes the others and exits 1; the merge of its
// shards writes the same files and must exit as the single run does, so that a script
// that checks the merge's status sees the failure.

void shard_cli_expect_merge_exits_as_single(const std::string& command,
                                            const std::string& single_out,
                                            const std::string& compare_dir, const TempDir& dir) {
  const CliRun single = run_cli_single(command + " --out " + single_out);
  ASSERT_EQ(single.code, 1) << single.out;
  const ShardCliSharded s = shard_cli_sharded(command, 2, dir.path);
  ASSERT_EQ(s.codes.size(), 2u);
  EXPECT_EQ(s.codes[0], 0);  // the readable first image
  EXPECT_EQ(s.codes[1], 1);  // the unreadable one
  ASSERT_TRUE(fs::exists(s.merged)) << s.merge.out;
  shard_cli_expect_same_files(compare_dir, s.merged);
  EXPECT_EQ(s.merge.code, single.code) << s.merge.out;
}

std::string shard_cli_images_with_a_bad_one(const TempDir& dir) {
  std::ofstream(dir.file("unreadable.png")) << "not a png";
  const std::string two = shard_cli_images(2);
  const size_t second = two.find(' ', 1);
  return two.substr(0, second) + " " + dir.file("unreadable.png") + two.substr(second);
}

TEST(ShardMergeExitStatus, ClassifyWithAnUnreadableImage) {
  TempDir dir("exit_classify");
  fs::create_directories(dir.path / "single");
  shard_cli_expect_merge_exits_as_single(
      "classify --model " + kShardCliSoftmax + shard_cli_images_with_a_bad_one(dir),
      dir.file("single/predictions.csv"), dir.file("single"), dir);
}

TEST(ShardMergeExitStatus, AnalyzeWithAnUnreadableImage) {
  TempDir dir("exit_analyze");
  shard_cli_expect_merge_exits_as_single("analyze --model " + kShardCliSoftmax +
                                             " --analyses rank,locality --images" +
                                             shard_cli_images_with_a_bad_one(dir),
                                         dir.file("single"), dir.file("single"), dir);
}

TEST(ShardMergeExitStatus, AnalyzeSizesWithAnUnreadableImage) {
  TempDir dir("exit_sizes");
  shard_cli_expect_merge_exits_as_single("analyze-sizes --model " + kShardCliSoftmax +
                                             " --img-sizes 28,42 --analyses rank --images" +
                                             shard_cli_images_with_a_bad_one(dir),
                                         dir.file("single"), dir.file("single"), dir);
}

TEST(ShardMergeExitStatus, ReportWithAnUnreadableImage) {
  TempDir dir("exit_report");
  shard_cli_expect_merge_exits_as_single("report --models " + kShardCliSoftmax +
                                             " --analyses rank --figures rank --formats svg"
                                             " --images" +
                                             shard_cli_images_with_a_bad_one(dir),
                                         dir.file("single"), dir.file("single"), dir);
}

// ---------------------------------------------------------------------------------------
// Refusals. The shards are made once: classify of 6 images as 3 shards (c0..c2) and shard
// 1 of 2 (c1of2); analyze shards 0/3 with --analyses rank (a0) and 1/3 with rank,locality
// (b1).

class ShardMergeErrors : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir("shard_errors");
    const std::string classify = "classify --model " + kShardCliSoftmax + shard_cli_images(6);
    const std::string analyze =
        "analyze --model " + kShardCliSoftmax + " --images" + shard_cli_images(6);
    const std::vector<std::pair<std::string, std::string>> runs = {
        {"c0", classify + " --shard 0/3"},
        {"c1", classify + " --shard 1/3"},
        {"c2", classify + " --shard 2/3"},
        {"c1of2", classify + " --shard 1/2"},
        {"a0", analyze + " --analyses rank --shard 0/3"},
        {"b1", analyze + " --analyses rank,locality --shard 1/3"}};
    for (const auto& [name, args] : runs) {
      const CliRun r = run_cli_single(args + " --out " + dir_->file(name));
      EXPECT_EQ(r.code, 0) << name << ": " << r.out;
    }
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static std::string shard(const std::string& name) { return dir_->file(name); }
  // `merge FOLDERS --out DIR/<out>`: the run, and whether the output folder was created.
  static CliRun merge(const std::string& folders, const std::string& out, bool* created = nullptr) {
    const CliRun r = run_cli_single("merge " + folders + " --out " + dir_->file(out));
    if (created) *created = fs::exists(dir_->file(out));
    return r;
  }
  static inline TempDir* dir_ = nullptr;
};

TEST_F(ShardMergeErrors, TheShardsMergeWhenComplete) {
  const CliRun r = merge(shard("c0") + " " + shard("c1") + " " + shard("c2"), "complete");
  EXPECT_EQ(r.code, 0) << r.out;
}

TEST_F(ShardMergeErrors, AnUnfinishedShardIsNamed) {
  // A shard killed before its manifest: its CSV is there, shard.json is not.
  fs::create_directories(shard("unfinished"));
  fs::copy_file(shard("c1") + "/predictions.csv", shard("unfinished") + "/predictions.csv",
                fs::copy_options::overwrite_existing);
  bool created = true;
  const CliRun r =
      merge(shard("c0") + " " + shard("unfinished") + " " + shard("c2"), "m1", &created);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, shard("unfinished") + " has no shard.json")) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, "did not finish")) << r.out;
  EXPECT_FALSE(created);
  const CliRun gone = merge(shard("c0") + " " + shard("no_such_folder"), "m1b", &created);
  EXPECT_EQ(gone.code, 1) << gone.out;
  EXPECT_TRUE(shard_cli_has(gone.out, shard("no_such_folder"))) << gone.out;
  EXPECT_FALSE(created);
}

TEST_F(ShardMergeErrors, AMissingShardIsNamedWithItsItems) {
  bool created = true;
  const CliRun r = merge(shard("c0") + " " + shard("c2"), "m2", &created);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, "missing shard 1/3 (items 2-3) of 6 items")) << r.out;
  EXPECT_FALSE(created);
  const CliRun two = merge(shard("c1"), "m2b", &created);
  EXPECT_EQ(two.code, 1) << two.out;
  EXPECT_TRUE(shard_cli_has(two.out, "missing shard 0/3 (items 0-1), 2/3 (items 4-5)")) << two.out;
}

TEST_F(ShardMergeErrors, AShardGivenTwiceIsNamed) {
  bool created = true;
  const CliRun r = merge(shard("c0") + " " + shard("c1") + " " + shard("c1") + " " + shard("c2"),
                         "m3", &created);
  EXPECT_EQ(r.code, 1) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, "shard 1/3 is given twice")) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, shard("c1"))) << r.out;
  EXPECT_FALSE(created);
}

TEST_F(ShardMergeErrors, ShardsOfAnotherRunAreRefusedNamingWhatDiffers) {
  bool created = true;
  // Another --analyses: the options differ, and the message names the option and both values.
  const CliRun analyses = merge(shard("a0") + " " + shard("b1"), "m4", &created);
  EXPECT_EQ(analyses.code, 1) << analyses.out;
  EXPECT_TRUE(shard_cli_has(analyses.out,
                            shard("b1") + " is not a shard of the same run as " + shard("a0")))
      << analyses.out;
  EXPECT_TRUE(shard_cli_has(analyses.out, "options")) << analyses.out;
  EXPECT_TRUE(shard_cli_has(analyses.out, "--analyses rank")) << analyses.out;
  EXPECT_TRUE(shard_cli_has(analyses.out, "--analyses rank,locality")) << analyses.out;
  EXPECT_FALSE(created);
  // Another command.
  const CliRun command = merge(shard("c0") + " " + shard("b1"), "m5", &created);
  EXPECT_EQ(command.code, 1) << command.out;
  EXPECT_TRUE(shard_cli_has(command.out, "its command is \"analyze\", not \"classify\""))
      << command.out;
  EXPECT_FALSE(created);
  // Another shard count.
  const CliRun count = merge(shard("c0") + " " + shard("c1of2"), "m6", &created);
  EXPECT_EQ(count.code, 1) << count.out;
  EXPECT_TRUE(shard_cli_has(count.out, shard("c1of2") + " is shard 1 of 2")) << count.out;
  EXPECT_FALSE(created);
}

TEST_F(ShardMergeErrors, MergeUsageErrors) {
  const std::string all = shard("c0") + " " + shard("c1") + " " + shard("c2");
  struct Case {
    std::string args, message;
  };
  for (const Case& c :
       std::vector<Case>{{"merge " + all, "merge needs --out DIR"},
                         {"merge --out " + dir_->file("u1"), "merge needs the shards' folders"},
                         {"merge", "merge needs"},
                         {"merge " + all + " --out", "--out needs a value"},
                         {"merge " + all + " --out " + dir_->file("u2") + " --bogus",
                          "unknown option --bogus"}}) {
    SCOPED_TRACE(c.args);
    const CliRun r = run_cli_single(c.args);
    EXPECT_EQ(r.code, 2) << r.out;  // kExitUsage
    EXPECT_TRUE(shard_cli_has(r.out, c.message)) << r.out;
    EXPECT_TRUE(shard_cli_has(r.out, "(see attnlab --help)")) << r.out;
  }
  EXPECT_FALSE(fs::exists(dir_->file("u1")));
  EXPECT_FALSE(fs::exists(dir_->file("u2")));
}

TEST_F(ShardMergeErrors, BadShardTextIsAUsageErrorNamingIt) {
  const std::string classify = "classify --model " + kShardCliSoftmax + shard_cli_images(2);
  for (const std::string text : {"4/4", "x", "1/0", "-1/2", "1/2/3", "2"}) {
    SCOPED_TRACE(text);
    const std::string out = dir_->file("bad_shard");
    const CliRun r = run_cli_single(classify + " --shard " + text + " --out " + out);
    EXPECT_EQ(r.code, 2) << r.out;
    EXPECT_TRUE(shard_cli_has(r.out, "--shard")) << r.out;
    EXPECT_TRUE(shard_cli_has(r.out, text)) << r.out;
    EXPECT_FALSE(fs::exists(out));
  }
}

// `--shard ''` (an unset variable in a job script: --shard "$TASK/$N" with both empty
// gives "/", but --shard "$SHARD" gives "") is no shard text either: it must be refused as
// parse_work_shard("") is, not read as "no --shard" (a whole run into the shard's --out,
// or the Slurm array's shard inside an array job).
TEST_F(ShardMergeErrors, EmptyShardTextIsAUsageError) {
  const std::string out = dir_->file("empty_shard");
  const CliRun r = run_cli_single("classify --model " + kShardCliSoftmax + shard_cli_images(2) +
                                  " --shard '' --out " + out);
  EXPECT_EQ(r.code, 2) << r.out;
  EXPECT_TRUE(shard_cli_has(r.out, "--shard")) << r.out;
  EXPECT_FALSE(fs::exists(out)) << "written: " << (fs::is_directory(out) ? "a folder" : "a file");
}

TEST_F(ShardMergeErrors, AShardNeedsItsOutputFolder) {
  const CliRun classify =
      run_cli_single("classify --model " + kShardCliSoftmax + shard_cli_images(2) + " --shard 0/2");
  EXPECT_EQ(classify.code, 2) << classify.out;
  EXPECT_TRUE(shard_cli_has(classify.out, "a sharded classify needs --out DIR")) << classify.out;
  const std::string eval =
      "eval --model " + kShardCliSoftmax + " --dataset folder:" + kShardCliSamples;
  const CliRun eval_shard = run_cli_single(eval + " --shard 0/2");
  EXPECT_EQ(eval_shard.code, 2) << eval_shard.out;
  EXPECT_TRUE(shard_cli_has(eval_shard.out, "a sharded eval needs --out DIR")) << eval_shard.out;
  const CliRun eval_out = run_cli_single(eval + " --out " + dir_->file("eval_out"));
  EXPECT_EQ(eval_out.code, 2) << eval_out.out;
  EXPECT_FALSE(fs::exists(dir_->file("eval_out")));
}
