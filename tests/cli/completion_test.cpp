// The bash completion script (`attnlab completion bash`): it names every command, preset,
// mechanism, analysis and colormap this binary has, each command's options come from its
// --help lines, bash parses it, and it completes what a user types (run in a real bash,
// without the bash-completion package: the script's own fallback path).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>

#include "app/cli/commands.h"
#include "app/cli/completion.h"
#include "app/session/analysis_registry.h"
#include "core/attention/registry.h"
#include "models/presets.h"
#include "tests/support/shell_run.h"
#include "tests/support/temp_path.h"
#include "viz/colormap.h"

namespace {

using attnlab::cli::bash_completion_script;
using attnlab::cli::command_options;

bool has(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

TEST(Completion, OptionsComeFromEachCommandsHelp) {
  const auto analyze = command_options("analyze");
  for (const char* o : {"--model", "--images", "--out", "--analyses", "--query", "--batch"})
    EXPECT_TRUE(has(analyze, o)) << o;
  EXPECT_FALSE(has(analyze, "--write-index"));  // zoo's, not analyze's
  // "options as analyze": report and analyze-sizes get analyze's options too.
  for (const char* c : {"report", "analyze-sizes", "analyze-series"})
    EXPECT_TRUE(has(command_options(c), "--rank-rtol")) << c;
  EXPECT_TRUE(has(command_options("report"), "--colormap"));
  EXPECT_TRUE(has(command_options("zoo"), "--write-index"));
  EXPECT_TRUE(command_options("info").empty());
  EXPECT_TRUE(command_options("no-such-command").empty());
  // Sorted, each once.
  EXPECT_TRUE(std::is_sorted(analyze.begin(), analyze.end()));
  EXPECT_EQ(std::adjacent_find(analyze.begin(), analyze.end()), analyze.end());
}

TEST(Completion, ScriptNamesEverythingThisBinaryKnows) {
  const std::string s = bash_completion_script();
  auto listed = [&](const std::string& var, const std::string& word) {
    const size_t at = s.find("\n" + var + "='");
    if (at == std::string::npos) return false;
    const std::string line = s.substr(at + 1, s.find('\n', at + 1) - at - 1);
    return (" " + line.substr(var.size() + 2, line.size() - var.size() - 3) + " ")
               .find(" " + word + " ") != std::string::npos;
  };
  for (const auto& c : attnlab::cli::commands())
    if (!c.name.empty()) {
      EXPECT_TRUE(listed("_attnlab_commands", c.name)) << c.name;
    }
  for (const auto& p : attnlab::models::presets())
    EXPECT_TRUE(listed("_attnlab_presets", p.name)) << p.name;
  for (const auto& m : attnlab::attention::mechanism_names())
    EXPECT_TRUE(listed("_attnlab_mechanisms", m)) << m;
  for (const auto& a : attnlab::session::analysis_names())
    EXPECT_TRUE(listed("_attnlab_analyses", a)) << a;
  for (const auto cm : attnlab::viz::kAllColormaps)
    EXPECT_TRUE(listed("_attnlab_colormaps", attnlab::viz::colormap_name(cm)));
  EXPECT_TRUE(listed("_attnlab_opts_analyze_series", "--checkpoints"));
  EXPECT_NE(s.find("complete -F _attnlab attnlab"), std::string::npos);
}

const char* kBashCompletion = "/usr/share/bash-completion/bash_completion";

// Runs the script in bash: completions for the words typed so far (the last one is the
// word being completed), one per line, sorted. With `library`, bash-completion is loaded
// first, as in an interactive shell on Debian (the script then uses its _init_completion
// and _filedir); without it, the script's own fallback runs.
std::string complete(const attnlab::testing::TempDir& dir, const std::string& typed_words,
                     bool library) {
  const std::string script = dir.file("attnlab.bash");
  const std::string load = library ? std::string("source ") + kBashCompletion + "; " : "";
  const std::string cmd = "cd '" + dir.path.string() + "' && bash --norc -c '" + load + "source " +
                          script + "; COMP_WORDS=(" + typed_words +
                          "); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMP_LINE=\"" + typed_words +
                          "\"; COMP_POINT=${#COMP_LINE}; _attnlab; "
                          "printf \"%s\\n\" \"${COMPREPLY[@]}\" | LC_ALL=C sort'";
  return attnlab::testing::run_shell(cmd).out;
}

void expect_completions(bool library) {
  attnlab::testing::TempDir dir("completion");
  std::ofstream(dir.file("attnlab.bash")) << bash_completion_script();
  const std::string check = "bash -n '" + dir.file("attnlab.bash") + "'";
  ASSERT_EQ(std::system(check.c_str()), 0) << "bash cannot parse the script";
  auto c = [&](const std::string& words) { return complete(dir, words, library); };

  EXPECT_EQ(c("attnlab cla"), "classify\n");
  EXPECT_EQ(c("attnlab --dt"), "--dtype\n");
  EXPECT_EQ(c("attnlab --dtype b"), "bf16\n");
  EXPECT_EQ(c("attnlab report --colormap ma"), "magma\n");
  EXPECT_EQ(c("attnlab --threads 2 report --colo"), "--colormap\n");
  EXPECT_EQ(c("attnlab zoo --wr"), "--write-index\n");
  // help COMMAND: the command names, and no files.
  EXPECT_EQ(c("attnlab hel"), "help\n");
  EXPECT_EQ(c("attnlab help cla"), "classify\n");
  EXPECT_EQ(c("attnlab --threads 2 help analyze-s"), "analyze-series\nanalyze-sizes\n");
  EXPECT_EQ(c("attnlab help attn"), "\n");      // none (printf prints one empty line)
  EXPECT_EQ(c("attnlab help info cla"), "\n");  // help takes one command
  EXPECT_EQ(c("attnlab analyze --preset deit_tiny_p"), "deit_tiny_patch16_224\n");
  // A comma list completes its last item and keeps the items before it.
  EXPECT_EQ(c("attnlab analyze --analyses entropy,roll"), "entropy,rollout\n");
  EXPECT_EQ(c("attnlab bench-attention --mechanisms softmax,hil"), "softmax,hilo\n");
  // --model: presets and checkpoint files, each once.
  std::ofstream(dir.file("deit_small_run.safetensors")) << "x";
  EXPECT_EQ(c("attnlab analyze --model deit_small_"),
            "deit_small_distilled_patch16_224\ndeit_small_patch16_224\n"
            "deit_small_run.safetensors\n");
  // File values: --config offers the files there.
  std::ofstream(dir.file("my_model.json")) << "{}";
  EXPECT_EQ(c("attnlab analyze --config my_"), "my_model.json\n");
}

TEST(Completion, BashCompletesWhatIsTypedWithTheScriptsOwnFallback) {
  expect_completions(false);
}

TEST(Completion, BashCompletesWhatIsTypedWithBashCompletionLoaded) {
  if (!std::ifstream(kBashCompletion)) GTEST_SKIP() << kBashCompletion << " is not installed";
  expect_completions(true);
}

}  // namespace
