// The attnlab commands, one table: each command's name, its handler and its lines of
// `attnlab --help`. main() dispatches through it and builds the help text from it — the
// whole help and each command's own (`attnlab CMD --help`, `attnlab help CMD`) — so a new
// command is one entry here (and its cmd_<name>.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "app/cli/cli_common.h"

namespace attnlab::cli {

struct CommandSpec {
  std::string name;  // empty: a help entry only (attnlab IMAGE... opens the GUI)
  // nullptr for commands main() runs itself (gui, whose code is not in this library).
  int (*run)(Args, const GlobalOptions&) = nullptr;
  std::string usage;  // its lines of --help, each ending in a newline
};

// In --help order.
const std::vector<CommandSpec>& commands();
// The command named `name`, or nullptr.
const CommandSpec* find_command(const std::string& name);
// The whole --help text: header, every command's usage, the global options.
std::string usage_text();

// One command's help, what `attnlab CMD --help` and `attnlab help CMD` print: a usage
// line, the command's lines of the whole help (with the nameless entries right after it:
// gui's `attnlab IMAGE...`), and where the options it shares are described (the global
// options; analyze's, for a command whose help says "options as analyze").
// Throws unknown_command() for a name that is no command.
std::string command_help(const std::string& name);

// The usage error for a word that names no command: the word and the commands there are.
UsageError unknown_command(const std::string& word);

// Which help the words after `attnlab` ask for: nothing (no -h or --help among them), or
// the word naming the command they are for ("" when there is none: the whole help). That
// word is the one main() dispatches on: the first, once the global options and their
// values are taken out, unless it is an option. It may name no command (the caller says
// so) or a file (the GUI opens files).
std::optional<std::string> help_request(const std::vector<std::string>& words);

}  // namespace attnlab::cli
