// One command's help (app/cli/commands.h): every command of the table has its own text —
// its usage lines and no other command's —, the options it shares point to where they are
// described, an unknown name is a usage error that names it and lists the commands, and
// help_request() finds the command that -h/--help is for the way main() dispatches. The
// binary's answers to `attnlab CMD --help` and `attnlab help CMD` are in
// tests/core/cli_test.cpp.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "app/cli/commands.h"

namespace attnlab {
namespace {

// The first line of a command's entry in the whole help ("  inspect FILE... [--stats] ...").
std::string first_usage_line(const cli::CommandSpec& c) {
  return c.usage.substr(0, c.usage.find('\n') + 1);
}

TEST(CommandHelp, EveryCommandHasItsOwnUsageAndNoOtherCommands) {
  for (const auto& c : cli::commands()) {
    if (c.name.empty()) continue;
    const std::string help = cli::command_help(c.name);
    EXPECT_EQ(help.rfind("usage: attnlab [global options] " + c.name + " ", 0), 0u) << help;
    EXPECT_NE(help.find(c.usage), std::string::npos) << c.name << ":\n" << help;
    for (const auto& other : cli::commands())
      if (!other.name.empty() && other.name != c.name) {
        EXPECT_EQ(help.find(first_usage_line(other)), std::string::npos)
            << c.name << "'s help has " << other.name << "'s usage:\n"
            << help;
      }
    // The global options are described once, in the whole help: each command points there.
    EXPECT_NE(help.find("global options --threads, --device, --dtype, --max-memory and every "
                        "command: attnlab --help\n"),
              std::string::npos)
        << help;
    EXPECT_LT(help.size(), cli::usage_text().size()) << c.name;
  }
}

TEST(CommandHelp, SharedOptionsPointToWhereTheyAreDescribed) {
  // "options as analyze": read analyze's own help.
  for (const char* name : {"analyze-series", "analyze-sizes", "report"})
    EXPECT_NE(cli::command_help(name).find("analyze's options: attnlab analyze --help\n"),
              std::string::npos)
        << name;
  EXPECT_EQ(cli::command_help("analyze").find("analyze's options"), std::string::npos);
  EXPECT_EQ(cli::command_help("info").find("analyze's options"), std::string::npos);
  // gui's help has the nameless entry after it: files as the first words open the GUI.
  EXPECT_NE(cli::command_help("gui").find("  IMAGE... --model M..."), std::string::npos);
  EXPECT_EQ(cli::command_help("inspect").find("IMAGE... --model M..."), std::string::npos);
}

TEST(CommandHelp, HelpIsACommandInTheTable) {
  const cli::CommandSpec* help = cli::find_command("help");
  ASSERT_NE(help, nullptr);
  EXPECT_NE(help->run, nullptr);
  EXPECT_NE(cli::usage_text().find("\n  help [COMMAND] "), std::string::npos);
}

// The message of the usage error command_help(name) throws ("" when it throws none).
std::string help_error(const std::string& name) {
  try {
    cli::command_help(name);
  } catch (const cli::UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(CommandHelp, AnUnknownCommandIsAUsageErrorNamingItAndTheCommands) {
  const std::string e = help_error("frobnicate");
  EXPECT_EQ(e.rfind("unknown command 'frobnicate' (commands: gui, inspect, info, ", 0), 0u) << e;
  for (const auto& c : cli::commands())
    if (!c.name.empty()) {
      EXPECT_NE(e.find(c.name), std::string::npos) << c.name;
    }
  EXPECT_EQ(std::string(cli::unknown_command("frobnicate").what()), e);
  // The nameless help entry (IMAGE...) is no command.
  EXPECT_EQ(help_error("").rfind("unknown command '' (commands: ", 0), 0u);
  EXPECT_EQ(help_error("inspect"), "");
}

std::optional<std::string> request(std::vector<std::string> words) {
  return cli::help_request(words);
}

TEST(CommandHelp, HelpRequestFindsTheCommandTheWayMainDispatches) {
  EXPECT_EQ(request({}), std::nullopt);
  EXPECT_EQ(request({"inspect", "a.pth"}), std::nullopt);
  EXPECT_EQ(request({"--help"}), "");
  EXPECT_EQ(request({"-h"}), "");
  EXPECT_EQ(request({"inspect", "--help"}), "inspect");
  EXPECT_EQ(request({"inspect", "-h"}), "inspect");
  EXPECT_EQ(request({"--help", "zoo"}), "zoo");
  EXPECT_EQ(request({"classify", "--checkpoint", "m.pth", "x.png", "--help"}), "classify");
  // Global options and their values come out first, wherever they are.
  EXPECT_EQ(request({"--threads", "2", "--device", "cpu", "classify", "-h"}), "classify");
  EXPECT_EQ(request({"--dtype", "bf16", "--max-memory", "8G", "--help"}), "");
  // A first word that is an option: no command (main() opens the GUI there).
  EXPECT_EQ(request({"--model", "m.pth", "--help"}), "");
  // Unknown words and files are returned; the caller tells them apart.
  EXPECT_EQ(request({"frobnicate", "--help"}), "frobnicate");
  EXPECT_EQ(request({"photo.png", "--help"}), "photo.png");
  EXPECT_EQ(request({"help", "--help"}), "help");
}

}  // namespace
}  // namespace attnlab
