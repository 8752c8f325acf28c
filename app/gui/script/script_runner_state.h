// ScriptRunner: where a running GUI script stands (its commands, the next one, what it waits
// for, the screenshot and pointer requests it left for the frame loop, how it ended). Plain
// data, apart from the step that runs it (script_runner.h), so that the commands
// (script_commands.cpp) read and set it without depending on the runner.
#pragma once

#include <string>
#include <vector>

#include "app/gui/script/gui_script.h"

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

}  // namespace attnlab::gui
