// The attnlab commands, one table: each command's name, its handler and its lines of
// `attnlab --help`. main() dispatches through it and builds the help text from it, so a new
// command is one entry here (and its cmd_<name>.cpp).
#pragma once

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

}  // namespace attnlab::cli
