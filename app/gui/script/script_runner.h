// Room script/ (app/gui/script): the language of `attnlab gui --script FILE` (parsing and
// checking in gui_script, one table of commands in script_commands), the runner that steps
// a script inside the frame loop, the screenshots scripts and docs take, and the model-info
// command's JSON (model_info.h). The GUI's
// tests and the docs' screenshots drive the real window through it.
//
// Runs a GUI script (gui_script.h) inside the frame loop: each frame, commands execute
// until one has to wait (for the workers to go idle, for N frames to be drawn, for a
// screenshot to be taken after this frame's rendering). A failed expectation or export
// ends the script with a message naming its line, and the GUI exits with status 1.
#pragma once

#include <string>
#include <vector>

#include "app/gui/gui_state.h"
#include "app/gui/script/script_runner_state.h"

namespace attnlab::gui {

// ATTNLAB_SCRIPT_WAIT_SCALE: a factor for every wait-idle and wait-job limit, for builds
// that run many times slower (the sanitizers: scripts/sanitize.sh sets it), so the same
// scripts test them. Unset: 1. Throws std::invalid_argument naming the variable when it is
// not a whole number from 1 to 1000.
int script_wait_scale_from_env();
int parse_script_wait_scale(const std::string& text);

// Executes what can run this frame. `idle`: no job queued, running or unapplied;
// `running_job`: the label of the compute job running now ("" = none).
void step_script(ScriptRunner& runner, GuiState& state, bool idle, double now,
                 const std::string& running_job = "");

}  // namespace attnlab::gui
