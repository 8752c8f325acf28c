// docs/ARCHITECTURE.md names what the registries hold ("The registries": one line each for
// the mechanisms, analyses, model families and commands). Each line must list exactly what
// its registry holds, in any order, so the document cannot fall behind the code.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "app/cli/commands.h"
#include "app/session/analysis_registry.h"
#include "core/attention/registry.h"
#include "models/model_family.h"

namespace attnlab::testing {
namespace {

// The `backticked` names on the list line that starts with "- <label>:" and its
// continuation lines (indented), up to the next list line or blank line. The names in
// parentheses after a family are descriptions, not backticked, so they are not counted.
std::set<std::string> listed(const std::string& label) {
  std::ifstream in(std::string(ATTNLAB_SOURCE_DIR) + "/docs/ARCHITECTURE.md");
  std::string line, text;
  bool inside = false;
  while (std::getline(in, line)) {
    if (inside && (line.empty() || line.rfind("- ", 0) == 0)) break;
    if (line.rfind("- " + label + ":", 0) == 0) inside = true;
    if (inside) text += line + "\n";
  }
  std::set<std::string> names;
  const std::regex name("`([a-z0-9_-]+)`");
  for (std::sregex_iterator it(text.begin(), text.end(), name), end; it != end; ++it)
    names.insert((*it)[1].str());
  return names;
}

TEST(ArchitectureLists, NameWhatTheRegistriesHold) {
  std::set<std::string> mechanisms, analyses, families, commands;
  for (const auto& m : attention::mechanism_names()) mechanisms.insert(m);
  for (const auto& a : session::analysis_names()) analyses.insert(a);
  for (const auto& f : models::model_families()) families.insert(f.name);
  for (const auto& c : cli::commands())
    if (!c.name.empty()) commands.insert(c.name);
  EXPECT_EQ(listed("Mechanisms"), mechanisms);
  EXPECT_EQ(listed("Analyses"), analyses);
  EXPECT_EQ(listed("Model families"), families);
  EXPECT_EQ(listed("Commands"), commands);
  EXPECT_GE(commands.size(), 20u);  // the parse found the lines at all
}

}  // namespace
}  // namespace attnlab::testing
