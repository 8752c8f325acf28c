// Issue 65: every analysis gives the same results in this build as in the LibTorch 1.13
// world (Debian 12's), within derived tolerances. The 1.13 world's results are committed
// (tests/data/cross_world/, written by scripts/make_cross_world_reference.sh from a Debian
// build), so the test needs no second build: for each case of cases.txt it runs `attnlab
// analyze` (float32) and attnlab_analyze_fp64 (float64) here and compares every table
// column and array with the reference's (compare.h; bounds in tolerance.h, rules for
// discrete outputs in output_kinds.h). It prints, per analysis, the largest difference
// against its bound at each precision. In the 1.13 world it compares two runs of one build.
// ATTNLAB_CROSS_WORLD_REFERENCE names another reference folder (a changed copy, to see the
// test fail).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/session/analysis_registry.h"
#include "tests/cross_world/compare.h"
#include "tests/support/bf16_bounds.h"
#include "tests/support/shell_run.h"
#include "tests/support/temp_path.h"

namespace attnlab::testing::cross_world {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name, model, analyses, options, notes;
};

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

std::vector<Case> read_cases() {
  std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/tests/cross_world/cases.txt");
  std::vector<Case> out;
  for (std::string line; std::getline(in, line);) {
    if (trim(line).empty() || trim(line)[0] == '#') continue;
    std::vector<std::string> f;
    std::stringstream s(line);
    for (std::string part; std::getline(s, part, '|');) f.push_back(trim(part));
    f.resize(5);
    out.push_back({f[0], f[1], f[2], f[3], f[4]});
  }
  return out;
}

std::string model_file(const std::string& spec) {
  if (spec.rfind("shared:", 0) == 0) return std::string(ATTNLAB_SHARED_DIR) + "/" + spec.substr(7);
  if (spec.rfind("source:", 0) == 0) return std::string(ATTNLAB_SOURCE_DIR) + "/" + spec.substr(7);
  ADD_FAILURE() << "cases.txt: model " << spec << " has no shared: or source: prefix";
  return spec;
}

std::string reference_dir() {
  const char* env = std::getenv("ATTNLAB_CROSS_WORLD_REFERENCE");
  return env && *env ? env : std::string(ATTNLAB_SOURCE_DIR) + "/tests/data/cross_world";
}

nlohmann::json read_json(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

std::string model_tag(const fs::path& dir) {
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    const std::string tail = "__settings.json";
    if (f.size() > tail.size() && f.compare(f.size() - tail.size(), tail.size(), tail) == 0)
      return f.substr(0, f.size() - tail.size());
  }
  return "";
}

// Group name → the analysis that writes it (a table two analyses share names both).
std::map<std::string, std::string> analyses_of(const Values& groups) {
  std::map<std::string, std::string> out;
  for (const auto& [name, g] : groups) {
    std::string who;
    for (const session::AnalysisInfo& info : session::analyses()) {
      bool mine = false;
      if (!g.table.empty()) {
        for (const std::string& t : info.tables) mine = mine || t == g.table;
      } else {
        const std::string dir = g.column.substr(0, g.column.find('/'));
        for (const std::string& a : info.arrays) mine = mine || a.rfind(dir + "__", 0) == 0;
      }
      if (mine) who += (who.empty() ? "" : "+") + info.name;
    }
    out[name] = who.empty() ? "?" : who;
  }
  return out;
}

// One case: its runs here against the reference's; adds the analyses it wrote to `covered`.
void check_case(const Case& c, std::set<std::string>& covered) {
  const fs::path ref = fs::path(reference_dir()) / c.name;
  ASSERT_TRUE(fs::is_directory(ref / "fp32") && fs::is_directory(ref / "fp64"))
      << ref << " is missing: write it with scripts/make_cross_world_reference.sh";
  const TempDir tmp("cross_world_" + c.name);
  const std::string common = " --model " + model_file(c.model) + " --images " +
                             std::string(ATTNLAB_SOURCE_DIR) +
                             "/assets/fashion-mnist/09-ankle-boot-00000.png --analyses " +
                             c.analyses + " " + c.options + " --out ";
  const CliRun f32 = run_shell(std::string(ATTNLAB_BINARY) + " analyze" + common +
                               tmp.file("fp32"));
  ASSERT_EQ(f32.code, 0) << f32.out;
  const CliRun f64 = run_shell(std::string(ATTNLAB_FP64_BINARY) + common + tmp.file("fp64"));
  ASSERT_EQ(f64.code, 0) << f64.out;

  const std::string tag = model_tag(ref / "fp32");
  ASSERT_FALSE(tag.empty()) << "no sidecar in " << ref / "fp32";
  const nlohmann::json ref_side = read_json(ref / "fp32" / (tag + "__settings.json"));
  const nlohmann::json ref_side64 = read_json(ref / "fp64" / (tag + "__settings.json"));
  EXPECT_EQ(ref_side.at("libtorch_version").get<std::string>().rfind("1.13.", 0), 0u)
      << "the reference was not written in the LibTorch 1.13 world";
  for (const char* p : {"fp32", "fp64"}) {
    const nlohmann::json mine = read_json(tmp.path / p / (tag + "__settings.json"));
    const nlohmann::json& theirs = std::string(p) == "fp32" ? ref_side : ref_side64;
    EXPECT_EQ(mine.at("skipped"), theirs.at("skipped")) << p;
    EXPECT_EQ(mine.at("warnings"), theirs.at("warnings")) << p;
    EXPECT_EQ(mine.at("layers").size(), theirs.at("layers").size()) << p;
  }

  Runs runs;
  runs.ref32 = read_output_values((ref / "fp32").string(), tag);
  runs.ref64 = read_output_values((ref / "fp64").string(), tag);
  runs.cur32 = read_output_values(tmp.file("fp32"), tag);
  runs.cur64 = read_output_values(tmp.file("fp64"), tag);
  // Every case analyses every traced layer: one per block.
  runs.roundings = bf16_roundings(int(ref_side.at("layers").size()));
  runs.float32_constants = c.notes.find("float32-constants") != std::string::npos;
  ASSERT_GE(runs.ref32.size(), 5u) << "the reference holds almost nothing";
  const auto names = analyses_of(runs.ref32);
  const Comparison cmp = compare_runs(runs, names);
  for (const auto& [group, analysis] : names) covered.insert(analysis);

  // Per analysis and precision: the largest |difference| / bound over its continuous
  // values, that difference and its bound, the values compared; then the discrete values.
  std::printf("%s (roundings n = %d%s)\n", c.name.c_str(), runs.roundings,
              runs.float32_constants ? "; float32 constants: float64 at the float32 bound" : "");
  std::printf("  %-22s %-40s %-40s %s\n", "analysis", "float64: max |d|/bound (|d|, bound, n)",
              "float32: max |d|/bound (|d|, bound, n)", "discrete n");
  std::set<std::string> all;
  for (const auto& [a, w] : cmp.float32) all.insert(a);
  for (const auto& [a, n] : cmp.discrete_compared) all.insert(a);
  const auto show = [](const std::map<std::string, Worst>& m, const std::string& key) {
    const auto it = m.find(key);
    if (it == m.end()) return std::string("-");
    char buf[96];
    std::snprintf(buf, sizeof buf, "%-7.2g (%.3g, %.3g, %d)", it->second.ratio, it->second.diff,
                  it->second.bound, it->second.compared);
    return std::string(buf);
  };
  for (const std::string& a : all) {
    const auto d = cmp.discrete_compared.find(a);
    std::printf("  %-22s %-40s %-40s %d\n", a.c_str(), show(cmp.float64, a).c_str(),
                show(cmp.float32, a).c_str(), d == cmp.discrete_compared.end() ? 0 : d->second);
  }
  for (const std::string& a : cmp.allowed) std::printf("  allowed: %s\n", a.c_str());
  for (const std::string& f : cmp.failures) ADD_FAILURE() << c.name << ": " << f;
}

// Every case, then: together they wrote something of every registered analysis.
TEST(CrossWorld, EveryAnalysisMatchesTheLibTorch113World) {
  const std::vector<Case> cases = read_cases();
  ASSERT_FALSE(cases.empty());
  std::set<std::string> covered;  // analyses with output in some case
  for (const Case& c : cases) {
    SCOPED_TRACE("case " + c.name);
    check_case(c, covered);
  }
  for (const session::AnalysisInfo& info : session::analyses()) {
    bool found = false;
    for (const std::string& c : covered)
      found = found || ("+" + c + "+").find("+" + info.name + "+") != std::string::npos;
    EXPECT_TRUE(found) << info.name << ": no case of tests/cross_world/cases.txt writes its output";
  }
}

}  // namespace
}  // namespace attnlab::testing::cross_world
