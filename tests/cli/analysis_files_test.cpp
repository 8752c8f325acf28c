// "The analysis is the unit" (issue 48): an analysis is its own files — its step in
// app/session/analyses/<name>.cpp, its computation in core/analysis/ (or a model-side run
// in models/*_run.*), its figures in viz/figures/ — plus one line in the registry and its
// tests. No other source file of the tool may name it: its settings, help, sidecar, GUI
// tab and controls come from the registry. This test counts the files outside those
// places that spell an analysis's name as a string literal ("entropy") and compares them
// with the exceptions that exist today, each with its reason. A new analysis has no
// exception: naming it anywhere else fails here.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "app/session/analysis_registry.h"

namespace attnlab::testing {
namespace {

namespace fs = std::filesystem;

// Today's exceptions, by analysis: the files that name it, and why.
const std::map<std::string, std::set<std::string>>& exceptions() {
  static const std::map<std::string, std::set<std::string>> known = {
      // The GUI's built-in map view shows the query maps, the rollout and the class
      // explanations as map kinds of its own (answered per click from the traces), and
      // faithfulness scores those same maps.
      {"maps",
       {"app/gui/views/figure_tabs.cpp", "app/gui/gui_state.h", "app/gui/views/report_command.cpp",
        "app/gui/views/tab_table.cpp", "app/gui/views/figure_tabs.h",
        "app/session/faithfulness_run.cpp", "app/session/faithfulness_state.cpp",
        "scripts/gui_soak.py"}},
      {"rollout",
       {"app/gui/views/frame_view.h", "app/gui/jobs/analysis_jobs.cpp",
        "app/gui/script/script_commands.cpp", "app/gui/views/report_command.cpp",
        "app/gui/views/controls.cpp", "app/session/faithfulness_maps.cpp", "app/session/results.h",
        "app/session/figure_view_options_figure.cpp"}},
      {"gradcam",
       {"app/gui/script/script_commands.cpp", "app/gui/views/report_command.cpp",
        "app/session/faithfulness_maps.cpp"}},
      {"gradrollout",
       {"app/gui/script/script_commands.cpp", "app/gui/views/report_command.cpp",
        "app/session/faithfulness_maps.cpp"}},
      // The map view's similarity kind answers each click from the traces (its script
      // command `map similarity` and its copied command name the analysis).
      {"similarity",
       {"app/gui/script/script_commands.cpp", "app/gui/views/report_command.cpp",
        "app/gui/views/controls.cpp"}},
      // AnchorFormer's assignments are also a trace capability and a GUI hover.
      {"anchors",
       {"app/gui/jobs/analysis_jobs.cpp", "core/attention/anchor.cpp", "models/vit.cpp",
        "scripts/gui_soak.py"}},
      // CKA between models and checkpoints is drawn by the report and the series view (and
      // a report shard saves its sums for the merge).
      {"cka",
       {"app/session/cka_series.cpp", "app/cli/report_cka.cpp", "app/cli/cmd_report.cpp",
        "app/cli/analyze_common.cpp", "app/cli/report_page.cpp", "app/cli/report_shard.cpp"}},
      // "heads" is also an array part and a table column of other analyses.
      {"heads",
       {"app/gui/jobs/analysis_jobs.cpp", "app/session/analysis_session.cpp",
        "app/cli/cmd_head_importance.cpp", "app/session/attention_bench.cpp",
        "core/attention/efficientvit.cpp", "models/clip.cpp"}},
      // faithfulness is a command of its own too (and of the Python module), whose run and
      // tables app/session/faithfulness_run builds for both.
      // (merge dispatches on the command's name).
      {"faithfulness",
       {"app/cli/commands.cpp", "app/cli/cmd_faithfulness.cpp", "app/session/faithfulness_run.cpp",
        "app/cli/cmd_merge.cpp", "app/cli/shard_run.h"}},
      // "prompts" is also a model option, a CLIP's text prompts (the GUI's script command,
      // its workspace file's key and model-info's field), as --text is on the command line.
      {"prompts",
       {"app/gui/script/model_info.cpp", "app/gui/script/script_commands.cpp",
        "app/gui/workspace/workspace_file.cpp"}},
      // The GUI soak test's default tour of tabs (scripts/gui_soak.py --tabs overrides it).
      {"spectra", {"scripts/gui_soak.py"}},
      // ... and the installed package's smoke test draws the rank figure from Python.
      {"rank", {"scripts/gui_soak.py", "scripts/test_package.sh"}},
      {"mask", {"scripts/gui_soak.py"}},
      {"channel_maps", {"scripts/gui_soak.py"}},
      {"locality", {"scripts/gui_soak.py"}},
      {"entropy", {"scripts/gui_soak.py"}},
      {"map_rank", {"scripts/gui_soak.py"}},
      {"outliers", {"scripts/gui_soak.py"}},
  };
  return known;
}

// An analysis's own places: its step, the registry, the computation and figure folders.
bool own_place(const std::string& rel) {
  return rel.rfind("app/session/analyses/", 0) == 0 || rel.rfind("core/analysis/", 0) == 0 ||
         rel.rfind("viz/figures/", 0) == 0 || rel == "app/session/analysis_registry.cpp" ||
         (rel.rfind("models/", 0) == 0 &&
          (rel.find("_run.cpp") != std::string::npos || rel.find("_run.h") != std::string::npos));
}

std::map<std::string, std::string> source_files() {
  std::map<std::string, std::string> out;
  const fs::path root(ATTNLAB_SOURCE_DIR);
  for (const char* dir : {"app", "core", "models", "viz", "scripts"})
    for (const auto& e : fs::recursive_directory_iterator(root / dir)) {
      const std::string ext = e.path().extension().string();
      if (!e.is_regular_file() || (ext != ".cpp" && ext != ".h" && ext != ".py" && ext != ".sh"))
        continue;
      const std::string rel = fs::relative(e.path(), root).generic_string();
      if (own_place(rel)) continue;
      std::ifstream in(e.path());
      std::stringstream text;
      text << in.rdbuf();
      out[rel] = text.str();
    }
  return out;
}

TEST(AnalysisFiles, NoSourceOutsideItsOwnFilesNamesAnAnalysis) {
  const auto files = source_files();
  ASSERT_GT(files.size(), 50u);  // the tree was found
  for (const auto& a : session::analyses()) {
    std::set<std::string> naming;
    for (const auto& [rel, text] : files)
      if (text.find("\"" + a.name + "\"") != std::string::npos) naming.insert(rel);
    const auto known = exceptions().find(a.name);
    const std::set<std::string> allowed =
        known == exceptions().end() ? std::set<std::string>{} : known->second;
    for (const auto& f : naming)
      EXPECT_TRUE(allowed.count(f))
          << f << " names the analysis \"" << a.name << "\": read it from the registry "
          << "(app/session/analysis_registry.h) instead, or, for a built-in use, add the "
             "file to this test's exceptions with the reason";
    // An exception that no longer holds is dropped from the list, so the list only shrinks.
    for (const auto& f : allowed)
      EXPECT_TRUE(naming.count(f))
          << f << " no longer names \"" << a.name << "\": remove it from this test's exceptions";
  }
}

}  // namespace
}  // namespace attnlab::testing
