// Runs a GUI script (gui_script.h) inside the frame loop: each frame, commands execute
// until one has to wait (for the workers to go idle, for N frames to be drawn, for a
// screenshot to be taken after this frame's rendering). A failed expectation or export
// ends the script with a message naming its line, and the GUI exits with status 1.
#pragma once

#include <string>
#include <vector>

#include "app/gui/gui_script.h"
#include "app/gui/gui_state.h"

namespace attnlab::gui {

struct ScriptRunner {
  std::vector<ScriptCommand> commands;
  size_t next = 0;
  int frames_left = 0;            // "frames N": frames still to draw
  bool waiting_idle = false;      // "wait-idle": until the workers are idle
  double idle_deadline = 0.0;     // ... or this time passes (then the script fails)
  std::string waiting_job;        // "wait-job": until a job whose label has this text runs
  double job_deadline = 0.0;      // ... or this time passes (then the script fails)
  int wait_scale = 1;             // every wait's limit is multiplied by this (slow builds)
  double wait_started = 0.0;      // when the current wait-idle / wait-job began
  bool log_waits = false;         // print each wait's duration and limit (ATTNLAB_TIMINGS)
  std::string screenshot;         // save the framebuffer here after this frame
  bool screenshot_figure = false;  // ... only the region of the view's figure
  bool mouse_away = false;         // move the pointer out of the window (no hover)
  int mouse_x = -1, mouse_y = -1;  // move the pointer there (window pixels), when >= 0
  bool series_requested = false;  // "load-series": the frame loop starts it (needs the worker)
  bool done = false, failed = false;
  std::string failure;
  bool active() const { return !commands.empty() && !done; }
};

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
