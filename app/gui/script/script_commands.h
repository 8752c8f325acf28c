// The commands of `attnlab gui --script`, one table: each command's syntax (name,
// arguments, help line; gui_script.h parses and checks them) and its handler, which runs
// it inside the frame loop (script_runner.h). A new command is one entry here.
#pragma once

#include <string>
#include <vector>

#include "app/gui/gui_state.h"
#include "app/gui/script/gui_script.h"

namespace attnlab::gui {

struct ScriptRunner;

// What a handler may touch: the runner (to wait, fail or end), the GUI state, whether the
// workers are idle, and the time.
struct ScriptContext {
  ScriptRunner& runner;
  GuiState& state;
  bool idle = false;
  double now = 0.0;
  std::string running_job;  // the compute job running now ("" = none)
};

// Runs one command; returns false when the script must wait before the next one (or
// failed: ScriptRunner::failed).
using ScriptHandler = bool (*)(ScriptContext&, const ScriptCommand&);

struct ScriptCommandSpec {
  CommandSyntax syntax;
  ScriptHandler run;
};

// Every command, in the order of script_help().
const std::vector<ScriptCommandSpec>& script_commands();
// The entry of a parsed command's name (parse_script accepts no other).
const ScriptCommandSpec& script_command(const std::string& name);

}  // namespace attnlab::gui
