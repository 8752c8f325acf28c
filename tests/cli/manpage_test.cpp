// The man page (`attnlab manpage`): every command of the --help table has its section with
// its help lines, the roff escapes are right, and groff formats it without a warning
// (skipped where groff is not installed).
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "app/cli/commands.h"
#include "app/cli/manpage.h"
#include "tests/support/shell_run.h"
#include "tests/support/temp_path.h"

namespace {

using attnlab::cli::man_page;
using attnlab::cli::roff_escape;

std::string run(const std::string& cmd) {
  return attnlab::testing::run_shell(cmd).out;
}

TEST(ManPage, RoffEscapes) {
  EXPECT_EQ(roff_escape("--model a-b"), "\\-\\-model a\\-b");
  EXPECT_EQ(roff_escape("C:\\path"), "C:\\epath");
  EXPECT_EQ(roff_escape(".hidden\n'quoted\nx.y"), "\\&.hidden\n\\&'quoted\nx.y");
  EXPECT_EQ(roff_escape("a \xE2\x80\x94 b"), "a \\(em b");
}

TEST(ManPage, HasTheSectionsAndEveryCommand) {
  const std::string page = man_page();
  for (const char* section :
       {".SH NAME", ".SH SYNOPSIS", ".SH DESCRIPTION", ".SH COMMANDS", ".SH GLOBAL OPTIONS",
        ".SH ENVIRONMENT", ".SH FILES", ".SH EXIT STATUS", ".SH EXAMPLES"})
    EXPECT_NE(page.find(std::string("\n") + section + "\n"), std::string::npos) << section;
  for (const auto& c : attnlab::cli::commands()) {
    if (c.name.empty()) continue;
    EXPECT_NE(page.find("\n.SS " + roff_escape(c.name) + "\n"), std::string::npos) << c.name;
  }
  // Help lines verbatim (escaped): an analysis's declared option (rank's, from the
  // registry: analysis_options.h), the --dtype global option.
  EXPECT_NE(page.find(roff_escape("[--rank-rtol X]         rank/map_rank: rank tolerance")),
            std::string::npos);
  EXPECT_NE(page.find(roff_escape("--dtype T       fp32 | bf16 | fp16")), std::string::npos);
  // Where one command's help is: an example, and `help` among the commands.
  EXPECT_NE(page.find(roff_escape("attnlab analyze --help")), std::string::npos);
  EXPECT_NE(page.find("\n.SS help\n"), std::string::npos);
  // No raw non-ASCII byte: man renders it the same under any locale.
  for (const char ch : page) EXPECT_GE(static_cast<signed char>(ch), 0) << "non-ASCII byte";
}

TEST(ManPage, GroffFormatsItWithoutWarnings) {
  if (run("command -v groff").empty()) GTEST_SKIP() << "groff is not installed";
  attnlab::testing::TempDir dir("manpage");
  std::ofstream(dir.file("attnlab.1")) << man_page();
  // -ww: every warning; -z: no output, so anything printed is a warning or an error.
  EXPECT_EQ(run("groff -man -Tutf8 -ww -z '" + dir.file("attnlab.1") + "'"), "");
  const std::string text = run("groff -man -Tutf8 -P-cbou '" + dir.file("attnlab.1") + "'");
  EXPECT_NE(text.find("COMMANDS"), std::string::npos);
  EXPECT_NE(text.find("analyze --model PRESET|CHECKPOINT --images FILES|DIR --out DIR"),
            std::string::npos)
      << text.substr(0, 2000);
}

}  // namespace
